import { useEffect, useState, type FormEvent } from 'react';
import { goTo, login } from './api.js';
import { messages } from './messages.js';

export function LoginPage() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string>();

  useEffect(() => {
    document.title = messages.loginTitle;
  }, []);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setPending(true);
    setError(undefined);
    const result = await login(email, password);
    if (result.ok) {
      goTo('/dashboard'); // the button stays disabled while the browser leaves
      return;
    }
    setError(result.error ?? messages.loginFailed);
    setPending(false);
  }

  return (
    <main className="card">
      <h1>{messages.loginTitle}</h1>
      <form onSubmit={submit}>
        <label>
          {messages.emailLabel}
          <input
            type="email"
            name="email"
            autoComplete="username"
            required
            value={email}
            onChange={(event) => setEmail(event.target.value)}
          />
        </label>
        <label>
          {messages.passwordLabel}
          <input
            type="password"
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(event) => setPassword(event.target.value)}
          />
        </label>
        <button type="submit" disabled={pending}>
          {pending ? messages.loggingIn : messages.loginButton}
        </button>
      </form>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </main>
  );
}
