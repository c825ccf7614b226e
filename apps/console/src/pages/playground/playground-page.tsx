import { useState } from 'react';
import type { FormEvent } from 'react';
import { retrieveChunks } from '../../api/trellis';
import type { ChunkHit } from '../../api/types';
import { ErrorNotice } from '../../components/error-notice';
import { KnowledgeBaseSelect, useKnowledgeBases } from '../../components/knowledge-bases';
import { ModeCheckboxes } from '../../components/mode-checkboxes';

const MODES = ['vector', 'fulltext', 'graph', 'hybrid'] as const;

interface ModeResult {
  readonly mode: string;
  readonly hits?: ChunkHit[];
  readonly error?: unknown;
  readonly ms?: number;
}

/** Retrieval playground: one question, every chosen mode side by side, each hit with its signals. */
export function PlaygroundPage() {
  const { selected } = useKnowledgeBases();
  const [question, setQuestion] = useState('');
  const [modes, setModes] = useState<string[]>([...MODES]);
  const [topK, setTopK] = useState(5);
  const [strategy, setStrategy] = useState('');
  const [results, setResults] = useState<ModeResult[]>([]);
  const [busy, setBusy] = useState(false);

  const run = async (e: FormEvent) => {
    e.preventDefault();
    if (!selected || question.trim() === '') return;
    setBusy(true);
    setResults(modes.map((mode) => ({ mode })));
    await Promise.all(
      modes.map(async (mode) => {
        const started = performance.now();
        let result: ModeResult;
        try {
          result = { mode, hits: await retrieveChunks(selected, { query: question.trim(), mode, topK, ...(strategy ? { strategy } : {}) }), ms: performance.now() - started };
        } catch (error) {
          result = { mode, error };
        }
        setResults((all) => all.map((r) => (r.mode === mode ? result : r)));
      }),
    );
    setBusy(false);
  };

  return (
    <section>
      <h1>Retrieval playground</h1>
      <form className="card" onSubmit={run}>
        <div className="actions" style={{ marginTop: 0 }}>
          <KnowledgeBaseSelect id="playground-kb" />
          <label className="inline-field">
            Top k
            <input type="number" min={1} max={50} value={topK} onChange={(e) => setTopK(Number(e.target.value) || 5)} style={{ width: '4.5rem' }} />
          </label>
          <label className="inline-field">
            Graph strategy
            <select value={strategy} onChange={(e) => setStrategy(e.target.value)}>
              <option value="">server default</option>
              <option value="ppr">ppr</option>
              <option value="weighted">weighted</option>
            </select>
          </label>
          <ModeCheckboxes options={MODES} chosen={modes} onChange={setModes} />
        </div>
        <div className="actions">
          <label htmlFor="playground-question" style={{ flex: 1 }}>
            Question
            <input id="playground-question" style={{ width: '100%' }} value={question} onChange={(e) => setQuestion(e.target.value)} />
          </label>
          <button type="submit" disabled={busy || !selected || modes.length === 0 || question.trim() === ''}>
            {busy ? 'Retrieving…' : 'Retrieve'}
          </button>
        </div>
      </form>
      {results.length === 0 ? <p className="muted">Ask once; each mode's ranking appears in its own column.</p> : null}
      <div className="columns">
        {results.map((r) => (
          <section key={r.mode} className="card" aria-labelledby={`mode-${r.mode}`} data-testid={`mode-${r.mode}`}>
            <h2 id={`mode-${r.mode}`} style={{ marginTop: 0 }}>
              {r.mode} {r.ms !== undefined ? <span className="muted">{r.ms.toFixed(0)} ms</span> : null}
            </h2>
            <ErrorNotice error={r.error} />
            {r.hits === undefined && r.error === undefined ? <p className="muted" role="status">Retrieving…</p> : null}
            {r.hits?.length === 0 ? <p className="muted">No hits.</p> : null}
            <ol style={{ paddingLeft: '1.2rem' }}>
              {r.hits?.map((h) => (
                <li key={h.chunkId} className="hit">
                  <div>
                    <strong>{h.sourceUri}</strong> #{h.ordinal} <span className="muted">score {h.score.toFixed(4)}</span>
                  </div>
                  <div className="signals">{h.signals.map((s) => `${s.source} ${s.score.toFixed(3)} (rank ${s.rank})`).join(' · ') || 'no signals'}</div>
                  <div className="hit-text">{h.text}</div>
                </li>
              ))}
            </ol>
          </section>
        ))}
      </div>
    </section>
  );
}
