import { useRef, useState, type FormEvent } from 'react';
import { flushSync } from 'react-dom';
import { ActionButton } from './ActionButton.js';
import { goTo, login } from './api.js';
import { Header } from './Header.js';
import { LiveRegion } from './LiveRegion.js';
import { messages } from './messages.js';

const ERROR_ID = 'login-error';

export function LoginPage() {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string>();
  // Read at once, unlike state: a second Enter in the same tick must already see the first.
  const sending = useRef(false);
  const emailField = useRef<HTMLInputElement>(null);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (sending.current) return;
    sending.current = true;
    // The fields are read as the browser holds them: what was typed before the script ran counts
    // too.
    const form = new FormData(event.currentTarget);
    setPending(true);
    setError(undefined);
    const result = await login(String(form.get('email')), String(form.get('password')));
    if (result.ok) {
      goTo('/dashboard'); // the button stays busy while the browser leaves
      return;
    }
    sending.current = false;
    flushSync(() => {
      setPending(false);
      setError(result.error ?? messages.loginFailed);
    });
    // Back to the start of the form, where the message (tied to the fields) is read out with it.
    emailField.current?.focus();
  }

  const invalid = error !== undefined;
  const fieldState = {
    'aria-invalid': invalid || undefined,
    'aria-describedby': invalid ? ERROR_ID : undefined,
  };

  return (
    <>
      <Header />
      <main className="card">
        <h1>{messages.loginTitle}</h1>
        <noscript>
          <p className="notice">{messages.needsJavaScript}</p>
        </noscript>
        <form onSubmit={submit}>
          <label>
            {messages.emailLabel}
            <input
              ref={emailField}
              type="email"
              name="email"
              autoComplete="username"
              required
              {...fieldState}
            />
          </label>
          <label>
            {messages.passwordLabel}
            <input
              type="password"
              name="password"
              autoComplete="current-password"
              required
              {...fieldState}
            />
          </label>
          <ActionButton
            type="submit"
            className="primary"
            label={messages.loginButton}
            busyLabel={messages.loggingIn}
            busy={pending}
          />
        </form>
        {error && (
          <p id={ERROR_ID} className="error">
            {error}
          </p>
        )}
        <LiveRegion text={pending ? messages.loggingIn : (error ?? '')} />
      </main>
    </>
  );
}
