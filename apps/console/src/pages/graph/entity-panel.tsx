import { useState } from 'react';
import type { FormEvent } from 'react';
import { deleteEntity, mergeEntities, updateEntity } from '../../api/trellis';
import type { Entity, EntityDetail } from '../../api/types';
import { ErrorNotice } from '../../components/error-notice';
import { useAction } from '../../components/use-async';

/** An entity's details and its edits: rename (and retype, redescribe), merge into another entity, delete. */
export function EntityPanel({ knowledgeBase, detail, candidates, onChanged }: { knowledgeBase: string; detail: EntityDetail; candidates: readonly Entity[]; onChanged: (openId?: string) => void }) {
  const entity = detail.entity;
  const [name, setName] = useState(entity.name);
  const [type, setType] = useState(entity.type);
  const [description, setDescription] = useState(entity.description);
  const targets = [...new Map([...detail.neighbours, ...candidates].filter((e) => e.id !== entity.id).map((e) => [e.id, e])).values()];
  const [target, setTarget] = useState('');
  const action = useAction();

  const save = async (e: FormEvent) => {
    e.preventDefault();
    if (await action.run(() => updateEntity(knowledgeBase, entity.id, { name, type, description }))) onChanged(entity.id);
  };
  const merge = async (e: FormEvent) => {
    e.preventDefault();
    const into = target || targets[0]?.id;
    if (into && (await action.run(() => mergeEntities(knowledgeBase, entity.id, into)))) onChanged(into);
  };
  const remove = async () => {
    if (window.confirm(`Delete ${entity.name} and its relationships?`) && (await action.run(() => deleteEntity(knowledgeBase, entity.id)))) onChanged();
  };

  return (
    <section className="card" aria-labelledby="entity-title" data-testid="entity-panel">
      <h2 id="entity-title" style={{ marginTop: 0 }}>
        {entity.name} <span className="muted">({entity.type || 'untyped'})</span>
      </h2>
      <dl className="kv">
        <dt>Description</dt>
        <dd>{entity.description || <span className="muted">none</span>}</dd>
        <dt>Mentions</dt>
        <dd>{entity.mentionCount}</dd>
        <dt>Relationships</dt>
        <dd>{detail.relationships.length}</dd>
        {entity.needsReview ? (
          <>
            <dt>Review</dt>
            <dd>only named, never described, by its chunks</dd>
          </>
        ) : null}
        <dt>Id</dt>
        <dd className="muted">{entity.id}</dd>
      </dl>
      <ErrorNotice error={action.error} context="Edit" />
      <form onSubmit={save} aria-label="Rename entity">
        <h3>Rename</h3>
        <div className="form-grid">
          <label>
            Name
            <input value={name} onChange={(e) => setName(e.target.value)} required />
          </label>
          <label>
            Type
            <input value={type} onChange={(e) => setType(e.target.value)} />
          </label>
        </div>
        <label>
          Description
          <textarea rows={2} value={description} onChange={(e) => setDescription(e.target.value)} />
        </label>
        <div className="actions">
          <button type="submit" disabled={action.busy}>
            Save entity
          </button>
          <button type="button" className="danger" disabled={action.busy} onClick={() => void remove()}>
            Delete entity
          </button>
        </div>
      </form>
      <form onSubmit={merge} aria-label="Merge entity">
        <h3>Merge</h3>
        {targets.length === 0 ? (
          <p className="muted">No other entity to merge into: search for one first.</p>
        ) : (
          <div className="actions">
            <label htmlFor="merge-target" className="inline-field">
              Merge {entity.name} into
              <select id="merge-target" value={target || targets[0]!.id} onChange={(e) => setTarget(e.target.value)}>
                {targets.map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.name}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit" disabled={action.busy}>
              Merge
            </button>
          </div>
        )}
      </form>
    </section>
  );
}
