import { useEffect, useState } from 'react';
import { deleteDocument, listDocuments, reindexDocument } from '../../api/trellis';
import { isSettled, statusLabel } from '../../api/types';
import type { IndexStatus, TrellisDocument } from '../../api/types';
import { ErrorNotice, Loading } from '../../components/error-notice';
import { useAction, useAsync } from '../../components/use-async';

const PAGE_SIZE = 20;
/** How often the list is read again while a document on the page is still indexing. */
const POLL_MS = 1000;
const FILTERS: readonly IndexStatus[] = ['INDEX_STATUS_PENDING', 'INDEX_STATUS_CHUNKED', 'INDEX_STATUS_EMBEDDED', 'INDEX_STATUS_EXTRACTED', 'INDEX_STATUS_GRAPHED', 'INDEX_STATUS_FAILED'];

/** The documents of a knowledge base, a page at a time, with status, stage timings, errors and LLM usage. */
export function DocumentTable({ knowledgeBase, refresh }: { knowledgeBase: string; refresh: number }) {
  const [tokens, setTokens] = useState<string[]>(['']);
  const [tick, setTick] = useState(0);
  const [status, setStatus] = useState<IndexStatus | ''>('');
  const page = useAsync(() => listDocuments(knowledgeBase, tokens.at(-1) ?? '', PAGE_SIZE, status || undefined), [knowledgeBase, tokens, tick, refresh, status]);
  const action = useAction();
  const documents = page.data?.documents;
  const indexing = documents?.some((d) => !isSettled(d.status)) ?? false;
  useEffect(() => {
    if (!indexing) return;
    const timer = setTimeout(() => setTick((t) => t + 1), POLL_MS);
    return () => clearTimeout(timer);
  }, [indexing, page.data]);
  useEffect(() => {
    setTokens(['']);
  }, [knowledgeBase, status]);

  const act = (work: () => Promise<unknown>) => void action.run(work).then(() => setTick((t) => t + 1));

  return (
    <section className="card" aria-labelledby="documents-title">
      <h2 id="documents-title" style={{ marginTop: 0 }}>
        Documents {indexing ? <span className="muted" role="status">· indexing…</span> : null}
      </h2>
      <label className="inline-field">
        Status
        <select aria-label="Only documents in status" value={status} onChange={(e) => setStatus(e.target.value as IndexStatus | '')}>
          <option value="">all</option>
          {FILTERS.map((f) => (
            <option key={f} value={f}>
              {statusLabel(f)}
            </option>
          ))}
        </select>
      </label>
      <ErrorNotice error={page.error} context="Documents" />
      <ErrorNotice error={action.error} context="Document action" />
      {page.loading && documents === undefined ? <Loading what="documents" /> : null}
      {documents?.length === 0 ? <p className="muted">{status ? `No ${statusLabel(status)} documents.` : 'No documents yet: drop files above.'}</p> : null}
      {documents && documents.length > 0 ? (
        <table>
          <thead>
            <tr>
              <th>Document</th>
              <th>Status</th>
              <th className="num">Chunks</th>
              <th>Stages</th>
              <th className="num">LLM calls</th>
              <th className="num">Tokens in/out</th>
              <th>Actions</th>
            </tr>
          </thead>
          <tbody>
            {documents.map((d) => (
              <DocumentRow key={d.id} document={d} busy={action.busy} onReindex={() => act(() => reindexDocument(knowledgeBase, d.id))} onDelete={() => act(() => deleteDocument(knowledgeBase, d.id))} />
            ))}
          </tbody>
        </table>
      ) : null}
      <div className="actions">
        <button type="button" className="secondary" disabled={tokens.length < 2} onClick={() => setTokens((t) => t.slice(0, -1))}>
          Previous page
        </button>
        <button type="button" className="secondary" disabled={!page.data?.nextPageToken} onClick={() => setTokens((t) => [...t, page.data!.nextPageToken])}>
          Next page
        </button>
        <span className="muted">Page {tokens.length}</span>
      </div>
    </section>
  );
}

function DocumentRow({ document: d, busy, onReindex, onDelete }: { document: TrellisDocument; busy: boolean; onReindex: () => void; onDelete: () => void }) {
  const chunks = d.chunkCounts.reduce((n, c) => n + c.count, 0);
  const status = statusLabel(d.status);
  return (
    <tr data-testid="document-row" data-status={status}>
      <td>
        <strong>{d.filename || d.sourceUri}</strong>
        <div className="muted">
          {d.sourceUri} · v{d.version} · {Number(d.sizeBytes).toLocaleString()} bytes
        </div>
        {d.error ? (
          <div className="error" role="note">
            {d.error}
          </div>
        ) : null}
      </td>
      <td>
        <span className={`status ${status}`}>{status}</span>
        <div className="muted">{d.currentStage}</div>
      </td>
      <td className="num">{chunks}</td>
      <td>
        {d.stages.length === 0 ? <span className="muted">—</span> : null}
        {d.stages.map((s) => (
          <div key={s.name} title={s.lastError || undefined}>
            {s.name} {Number(s.durationMs).toLocaleString()} ms{s.failures > 0 ? <span className="status failed"> {s.failures} failed</span> : null}
          </div>
        ))}
      </td>
      <td className="num">
        {d.llmUsage.calls}
        {Number(d.llmUsage.cacheHits) > 0 ? <div className="muted">{d.llmUsage.cacheHits} cached</div> : null}
      </td>
      <td className="num">
        {d.llmUsage.inputTokens}/{d.llmUsage.outputTokens}
        {d.llmUsage.estimatedCostUsd > 0 ? <div className="muted">${d.llmUsage.estimatedCostUsd.toFixed(4)}</div> : null}
      </td>
      <td>
        <div className="actions" style={{ marginTop: 0 }}>
          <button type="button" className="secondary" disabled={busy} onClick={onReindex} aria-label={`Reindex ${d.filename || d.sourceUri}`}>
            Reindex
          </button>
          <button type="button" className="danger" disabled={busy} onClick={() => window.confirm(`Delete ${d.filename || d.sourceUri}?`) && onDelete()} aria-label={`Delete ${d.filename || d.sourceUri}`}>
            Delete
          </button>
        </div>
      </td>
    </tr>
  );
}
