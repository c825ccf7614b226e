import { useState } from 'react';
import type { FormEvent } from 'react';
import { getEntity, searchEntities } from '../../api/trellis';
import type { Entity } from '../../api/types';
import { ErrorNotice, Loading } from '../../components/error-notice';
import { KnowledgeBaseSelect, useKnowledgeBases } from '../../components/knowledge-bases';
import { useAction, useAsync } from '../../components/use-async';
import { EditLog } from './edit-log';
import { EntityPanel } from './entity-panel';
import { GraphView } from './graph-view';
import { RelationshipList } from './relationship-list';
import { SynopsisForm } from './synopsis-form';

/** Graph explorer: find entities, walk their neighbourhoods, edit the graph and undo. */
export function GraphPage() {
  const { selected } = useKnowledgeBases();
  const [query, setQuery] = useState('');
  const [results, setResults] = useState<Entity[]>();
  const [openId, setOpenId] = useState<string>();
  const [version, setVersion] = useState(0);
  const search = useAction();
  const detail = useAsync(() => (selected && openId ? getEntity(selected, openId) : Promise.resolve(undefined)), [selected, openId, version]);

  const find = async (e?: FormEvent) => {
    e?.preventDefault();
    if (!selected) return;
    await search.run(async () => setResults(await searchEntities(selected, query.trim(), 30)));
  };
  const changed = (id?: string) => {
    setOpenId(id);
    setVersion((v) => v + 1);
    void find();
  };

  return (
    <div className="row">
      <aside className="card" style={{ flex: '0 0 17rem' }}>
        <h1>Graph explorer</h1>
        <KnowledgeBaseSelect id="graph-kb" />
        <form onSubmit={find} className="actions">
          <label htmlFor="entity-search" className="inline-field">
            Entity
            <input id="entity-search" type="search" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="name" style={{ width: '9rem' }} />
          </label>
          <button type="submit" disabled={!selected || search.busy}>
            Search
          </button>
        </form>
        <ErrorNotice error={search.error} context="Search" />
        {results?.length === 0 ? <p className="muted">No entity matches.</p> : null}
        <ul className="history" aria-label="Entities found">
          {results?.map((r) => (
            <li key={r.id}>
              <button type="button" className={r.id === openId ? '' : 'secondary'} aria-pressed={r.id === openId} onClick={() => setOpenId(r.id)}>
                {r.name}
              </button>{' '}
              <span className="muted">
                {r.type} · {r.mentionCount}
              </span>
            </li>
          ))}
        </ul>
      </aside>
      <div className="grow">
        {!openId ? <p className="muted">Search for an entity and pick it to see its neighbourhood.</p> : null}
        <ErrorNotice error={detail.error} context="Entity" />
        {detail.loading && detail.data === undefined && openId ? <Loading what="the entity" /> : null}
        {detail.data ? (
          <>
            <GraphView detail={detail.data} onOpen={setOpenId} />
            <div className="row" style={{ marginTop: '1rem' }}>
              <div className="grow">
                <EntityPanel key={`${detail.data.entity.id}-${version}`} knowledgeBase={selected} detail={detail.data} candidates={results ?? []} onChanged={changed} />
                <SynopsisForm key={`syn-${detail.data.entity.id}`} knowledgeBase={selected} detail={detail.data} onCreated={changed} />
              </div>
              <div className="grow">
                <RelationshipList knowledgeBase={selected} detail={detail.data} onOpen={setOpenId} onChanged={() => changed(openId)} />
              </div>
            </div>
          </>
        ) : null}
        {selected ? <EditLog knowledgeBase={selected} version={version} onUndone={() => changed(openId)} /> : null}
      </div>
    </div>
  );
}
