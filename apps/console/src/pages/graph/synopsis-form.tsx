import { useState } from 'react';
import type { FormEvent } from 'react';
import { createSynopsis } from '../../api/trellis';
import type { EntityDetail } from '../../api/types';
import { ErrorNotice } from '../../components/error-notice';
import { useAction } from '../../components/use-async';

/** A synopsis entity written by hand over the entity and the neighbours ticked. */
export function SynopsisForm({ knowledgeBase, detail, onCreated }: { knowledgeBase: string; detail: EntityDetail; onCreated: (id: string) => void }) {
  const group = [detail.entity, ...detail.neighbours];
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [ids, setIds] = useState<string[]>([detail.entity.id]);
  const action = useAction();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    let created = '';
    if (await action.run(async () => (created = (await createSynopsis(knowledgeBase, name, description, ids)).entity.id))) onCreated(created);
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="synopsis-title">
      <h2 id="synopsis-title" style={{ marginTop: 0 }}>
        Synopsis
      </h2>
      <div className="form-grid">
        <label>
          Name
          <input required value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          Description
          <input required value={description} onChange={(e) => setDescription(e.target.value)} />
        </label>
      </div>
      <fieldset style={{ border: 0, padding: 0 }}>
        <legend className="muted">Over</legend>
        {group.map((g) => (
          <label key={g.id} className="inline-field" style={{ marginRight: '0.8rem' }}>
            <input type="checkbox" checked={ids.includes(g.id)} onChange={(e) => setIds((all) => (e.target.checked ? [...all, g.id] : all.filter((i) => i !== g.id)))} />
            {g.name}
          </label>
        ))}
      </fieldset>
      <ErrorNotice error={action.error} context="Synopsis" />
      <div className="actions">
        <button type="submit" disabled={action.busy || ids.length === 0}>
          Create synopsis
        </button>
      </div>
    </form>
  );
}
