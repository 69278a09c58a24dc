import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Navigate, Route, Routes } from 'react-router-dom';
import { DashboardPage } from './DashboardPage.js';
import { LoginPage } from './LoginPage.js';
import './styles.css';

// The server sends this document only for /login and, after its session check, /dashboard.
// Moving between the two is a full navigation (see api.ts), so /dashboard is always checked
// by the server; the router only picks the page for the path.
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <BrowserRouter>
      <Routes>
        <Route path="/dashboard" element={<DashboardPage />} />
        <Route path="/login" element={<LoginPage />} />
        <Route path="*" element={<Navigate to="/login" replace />} />
      </Routes>
    </BrowserRouter>
  </StrictMode>,
);
