import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { DashboardPage } from './DashboardPage.js';
import { LoginPage } from './LoginPage.js';
import './styles.css';

// The server serves this document only at /login and, after its session check, at /dashboard.
const onDashboard = window.location.pathname.replace(/\/+$/, '').toLowerCase() === '/dashboard';

createRoot(document.getElementById('root')!).render(
  <StrictMode>{onDashboard ? <DashboardPage /> : <LoginPage />}</StrictMode>,
);
