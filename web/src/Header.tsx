import type { ReactNode } from 'react';
import { messages } from './messages.js';

/** The service's name, and the page's secondary action (logout) when it has one. */
export function Header({ children }: { children?: ReactNode }) {
  return (
    <header className="site-header">
      <p className="service-name">{messages.serviceName}</p>
      {children}
    </header>
  );
}
