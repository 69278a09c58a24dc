// Hot reload's set-up for React, first of all modules (nothing in a build).
import '@vitejs/plugin-react/preamble';
import { StrictMode } from 'react';
import { createRoot, hydrateRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router-dom';
import { App } from './App.js';
import { STATE_ELEMENT_ID, type PageState } from './pageState.js';
import './styles.css';

const state = JSON.parse(document.getElementById(STATE_ELEMENT_ID)!.textContent!) as PageState;
const container = document.getElementById('root')!;
const app = (
  <StrictMode>
    <BrowserRouter>
      <App state={state} />
    </BrowserRouter>
  </StrictMode>
);

// Built pages arrive rendered by the server and are hydrated. Vite's dev server (npm run dev)
// sends the document with the state alone, and the page is rendered here.
if (container.hasChildNodes()) hydrateRoot(container, app);
else createRoot(container).render(app);
