import { useState } from 'react';
import type { FormEvent } from 'react';
import { apiKey, setApiKey } from '../api/http';

/** The API key sent as `Authorization: Bearer` (standalone without TRELLIS_API_KEYS needs none). */
export function ApiKeyForm({ onChange }: { onChange: () => void }) {
  const [value, setValue] = useState(apiKey);
  const [saved, setSaved] = useState(apiKey() !== '');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setApiKey(value);
    setSaved(value.trim() !== '');
    onChange();
  };
  return (
    <form className="api-key" onSubmit={submit}>
      <label htmlFor="api-key">API key</label>
      <input id="api-key" type="password" autoComplete="off" placeholder="none" value={value} onChange={(e) => setValue(e.target.value)} />
      <button type="submit">Save key</button>
      <span className="muted" aria-live="polite">
        {saved ? 'key set' : 'no key'}
      </span>
    </form>
  );
}
