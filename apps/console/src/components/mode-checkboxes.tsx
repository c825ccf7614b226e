/**
 * Checkboxes choosing some of `options`, kept in the order of `options` whatever order they
 * are ticked in (the retrieval modes of the playground and of evaluations).
 */
export function ModeCheckboxes({ options, chosen, onChange }: { options: readonly string[]; chosen: readonly string[]; onChange(chosen: string[]): void }) {
  const toggle = (mode: string, on: boolean) => onChange(on ? options.filter((x) => x === mode || chosen.includes(x)) : chosen.filter((x) => x !== mode));
  return (
    <fieldset style={{ border: 0, padding: 0, margin: 0, display: 'inline-flex', gap: '0.6rem' }}>
      <legend className="muted" style={{ float: 'left', marginRight: '0.4rem' }}>
        Modes
      </legend>
      {options.map((m) => (
        <label key={m} className="inline-field">
          <input type="checkbox" checked={chosen.includes(m)} onChange={(e) => toggle(m, e.target.checked)} />
          {m}
        </label>
      ))}
    </fieldset>
  );
}
