import type { MouseEventHandler } from 'react';
import { useHydrated } from './useHydrated.js';

interface ActionButtonProps {
  type: 'submit' | 'button';
  label: string;
  /** While the action runs: its label, and the button is marked disabled. */
  busyLabel: string;
  busy: boolean;
  className?: string;
  onClick?: MouseEventHandler<HTMLButtonElement>;
}

/**
 * A button whose action runs through script. While the action runs it is `aria-disabled`, not
 * `disabled`: a disabled button would drop the keyboard focus to the page's start, and the
 * action's handler ignores repeats instead. Before the script has run it is really disabled,
 * since it could do nothing yet.
 */
export function ActionButton({
  type,
  label,
  busyLabel,
  busy,
  className,
  onClick,
}: ActionButtonProps) {
  const hydrated = useHydrated();
  return (
    <button
      type={type}
      className={className}
      disabled={!hydrated}
      aria-disabled={busy || undefined}
      onClick={onClick}
    >
      {busy ? busyLabel : label}
    </button>
  );
}
