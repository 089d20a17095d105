import { useState } from 'preact/hooks';

export function Login({ error, onKey }: { error?: string | undefined; onKey: (key: string) => void }) {
  const [key, setKey] = useState('');
  return (
    <main class="page login">
      <h1>Engram memory console</h1>
      <p>This Engram asks for a key. It stays in this browser tab only and is sent to this server, nowhere else.</p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (key.trim()) onKey(key.trim());
        }}
      >
        <label for="engram-key">Engram key</label>
        <input
          id="engram-key"
          type="password"
          autocomplete="current-password"
          value={key}
          onInput={(event) => setKey(event.currentTarget.value)}
          required
          autofocus
        />
        <button type="submit">Open the console</button>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}
