import { useState } from 'react';
import { deleteRelationship, updateRelationship } from '../../api/trellis';
import type { EntityDetail, Relationship } from '../../api/types';
import { ErrorNotice } from '../../components/error-notice';
import { useAction } from '../../components/use-async';

/** An entity's relationships with their provenance (the chunks that state them), weight and delete. */
export function RelationshipList({ knowledgeBase, detail, onChanged, onOpen }: { knowledgeBase: string; detail: EntityDetail; onChanged: () => void; onOpen: (entityId: string) => void }) {
  const action = useAction();
  return (
    <section className="card" aria-labelledby="relationships-title">
      <h2 id="relationships-title" style={{ marginTop: 0 }}>
        Relationships
      </h2>
      <ErrorNotice error={action.error} context="Relationship edit" />
      {detail.relationships.length === 0 ? <p className="muted">This entity has no relationships.</p> : null}
      <ul className="history">
        {detail.relationships.map((r) => (
          <RelationshipItem key={r.id} relationship={r} centerId={detail.entity.id} busy={action.busy} onOpen={onOpen}
            onWeight={(weight) => void action.run(() => updateRelationship(knowledgeBase, r.id, { weight })).then((ok) => ok && onChanged())}
            onDelete={() => void action.run(() => deleteRelationship(knowledgeBase, r.id)).then((ok) => ok && onChanged())}
          />
        ))}
      </ul>
    </section>
  );
}

function RelationshipItem({ relationship: r, centerId, busy, onOpen, onWeight, onDelete }: {
  relationship: Relationship;
  centerId: string;
  busy: boolean;
  onOpen: (entityId: string) => void;
  onWeight: (weight: number) => void;
  onDelete: () => void;
}) {
  const [weight, setWeight] = useState(String(r.weight));
  const other = r.sourceEntityId === centerId ? { id: r.targetEntityId, name: r.targetName } : { id: r.sourceEntityId, name: r.sourceName };
  return (
    <li className="hit">
      <div>
        {r.sourceName} <strong>{r.label || '—'}</strong> {r.targetName}{' '}
        <button type="button" className="link" onClick={() => onOpen(other.id)}>
          open {other.name}
        </button>
      </div>
      {r.description ? <div className="muted">{r.description}</div> : null}
      <div className="signals">Provenance: {r.chunkIds.length === 0 ? 'manual' : `${r.chunkIds.length} chunk(s): ${r.chunkIds.join(', ')}`}</div>
      <form
        className="actions"
        onSubmit={(e) => {
          e.preventDefault();
          onWeight(Number(weight));
        }}
      >
        <label className="inline-field">
          Weight
          <input type="number" step="0.1" value={weight} onChange={(e) => setWeight(e.target.value)} style={{ width: '6rem' }} aria-label={`Weight of ${r.sourceName} ${r.label} ${r.targetName}`} />
        </label>
        <button type="submit" className="secondary" disabled={busy}>
          Set weight
        </button>
        <button type="button" className="danger" disabled={busy} onClick={onDelete}>
          Delete
        </button>
      </form>
    </li>
  );
}
