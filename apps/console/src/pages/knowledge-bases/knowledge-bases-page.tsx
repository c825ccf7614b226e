import { useState } from 'react';
import { deleteKnowledgeBase, getKnowledgeBase, reindexKnowledgeBase } from '../../api/trellis';
import { ErrorNotice, Loading } from '../../components/error-notice';
import { useKnowledgeBases } from '../../components/knowledge-bases';
import { useAction, useAsync } from '../../components/use-async';
import { CreateKnowledgeBaseForm } from './create-form';
import { DocumentTable } from './document-table';
import { SettingsForm } from './settings-form';
import { UploadZone } from './upload-zone';

/** Knowledge bases: create, pick, edit settings, add documents and watch them index. */
export function KnowledgeBasesPage() {
  const { list, selected, select } = useKnowledgeBases();
  const [refresh, setRefresh] = useState(0);
  const kb = useAsync(() => (selected ? getKnowledgeBase(selected) : Promise.resolve(undefined)), [selected, refresh]);
  const action = useAction();
  const bump = () => {
    setRefresh((r) => r + 1);
    list.reload();
  };
  return (
    <div className="row">
      <aside style={{ flex: '0 0 19rem' }}>
        <section className="card" aria-labelledby="kb-list-title">
          <h1 id="kb-list-title">Knowledge bases</h1>
          <ErrorNotice error={list.error} context="Knowledge bases" />
          {list.loading && list.data === undefined ? <Loading what="knowledge bases" /> : null}
          {list.data?.length === 0 ? <p className="muted">None yet: create the first one below.</p> : null}
          <ul className="history">
            {(list.data ?? []).map((k) => (
              <li key={k.id}>
                <button type="button" className={k.name === selected ? '' : 'secondary'} aria-pressed={k.name === selected} onClick={() => select(k.name)}>
                  {k.name}
                </button>{' '}
                <span className="muted">{k.documentCount} documents</span>
              </li>
            ))}
          </ul>
        </section>
        <CreateKnowledgeBaseForm
          onCreated={(name) => {
            select(name);
            list.reload();
          }}
        />
      </aside>
      <div className="grow">
        <ErrorNotice error={kb.error} context={selected} />
        {kb.data ? (
          <>
            <div className="card">
              <h2 style={{ marginTop: 0 }}>{kb.data.name}</h2>
              <p className="muted">
                {kb.data.description || 'No description'} · created {new Date(kb.data.createdAt).toLocaleString()} · {kb.data.documentCount} documents · LLM {kb.data.llmUsage.calls} calls,{' '}
                {kb.data.llmUsage.inputTokens}/{kb.data.llmUsage.outputTokens} tokens, ${kb.data.llmUsage.estimatedCostUsd.toFixed(4)}
              </p>
              <div className="actions">
                <button type="button" className="secondary" disabled={action.busy} onClick={() => void action.run(() => reindexKnowledgeBase(selected)).then(bump)}>
                  Reindex all documents
                </button>
                <button
                  type="button"
                  className="danger"
                  disabled={action.busy}
                  onClick={() => window.confirm(`Delete ${selected} and everything in it?`) && void action.run(() => deleteKnowledgeBase(selected)).then(() => list.reload())}
                >
                  Delete knowledge base
                </button>
              </div>
              <ErrorNotice error={action.error} context="Knowledge base action" />
            </div>
            <UploadZone knowledgeBase={selected} onUploaded={bump} />
            <DocumentTable knowledgeBase={selected} refresh={refresh} />
            <SettingsForm key={kb.data.id} kb={kb.data} onSaved={bump} />
          </>
        ) : null}
      </div>
    </div>
  );
}
