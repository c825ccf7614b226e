import { useEffect, useRef } from 'react';
import { documentChunks, getDocument } from '../../api/trellis';
import { ErrorNotice, Loading } from '../../components/error-notice';
import { useAsync } from '../../components/use-async';

export interface OpenChunk {
  readonly knowledgeBase: string;
  readonly documentId: string;
  readonly chunkId: string;
  readonly snippet: string;
}

/** A cited chunk shown in its document: the document's chunks in order, the cited one marked and scrolled to. */
export function ChunkViewer({ chunk, onClose }: { chunk: OpenChunk; onClose: () => void }) {
  const document = useAsync(() => getDocument(chunk.knowledgeBase, chunk.documentId), [chunk.knowledgeBase, chunk.documentId]);
  const chunks = useAsync(() => documentChunks(chunk.knowledgeBase, chunk.documentId, chunk.snippet), [chunk.knowledgeBase, chunk.documentId, chunk.snippet]);
  const cited = useRef<HTMLDivElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
  }, [chunk.chunkId]);
  useEffect(() => {
    cited.current?.scrollIntoView({ block: 'nearest' });
  }, [chunks.data, chunk.chunkId]);
  return (
    <section className="card" aria-labelledby="chunk-viewer-title" data-testid="chunk-viewer">
      <div className="actions" style={{ marginTop: 0, justifyContent: 'space-between' }}>
        <h2 id="chunk-viewer-title" tabIndex={-1} ref={heading} style={{ margin: 0 }}>
          {document.data ? document.data.filename || document.data.sourceUri : 'Document'}
        </h2>
        <button type="button" className="secondary" onClick={onClose}>
          Close
        </button>
      </div>
      <ErrorNotice error={document.error} context="Document" />
      {document.data ? (
        <p className="muted">
          {document.data.sourceUri} · version {document.data.version} · {document.data.mimeType}
        </p>
      ) : null}
      <ErrorNotice error={chunks.error} context="Chunks" />
      {chunks.loading && chunks.data === undefined ? <Loading what="the document's chunks" /> : null}
      {chunks.data?.length === 0 ? <p className="muted">This document has no chunks (it may have been re-indexed or deleted).</p> : null}
      {chunks.data?.map((c) => (
        <div key={c.chunkId} ref={c.chunkId === chunk.chunkId ? cited : undefined} className={`chunk${c.chunkId === chunk.chunkId ? ' cited' : ''}`} data-cited={c.chunkId === chunk.chunkId ? 'true' : undefined}>
          <span className="muted">#{c.ordinal}{c.chunkId === chunk.chunkId ? ' · cited' : ''}</span>
          {'\n'}
          {c.text}
        </div>
      ))}
    </section>
  );
}
