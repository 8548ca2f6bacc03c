/** @module Sign in: paste an API key; it is kept in this tab's sessionStorage only, never in a URL. */
import { useState } from 'preact/hooks';
import type { Problem } from '../api.ts';
import { ErrorMessage } from '../ui.tsx';

export function SignIn({ onSignIn, problem }: { onSignIn: (key: string) => Promise<void>; problem: Problem | null }) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  return (
    <section class="signin">
      <h1>Parley console</h1>
      <p>
        Sign in with an API key. It stays in this browser tab (session storage) and is sent only to this server, as the{' '}
        <code>Authorization</code> header of each request.
      </p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          setBusy(true);
          void onSignIn(key.trim()).finally(() => setBusy(false));
        }}
      >
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          required
          value={key}
          onInput={(event) => setKey(event.currentTarget.value)}
        />
        <button type="submit" class="button primary" disabled={busy || key.trim() === ''}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <ErrorMessage problem={problem} />
      <p class="muted">
        <code>npm start</code> prints a development key on memory storage; <code>parley keys create</code> makes one
        elsewhere.
      </p>
    </section>
  );
}
