import { useState } from 'react';
import type { DragEvent, FormEvent } from 'react';
import { addDocumentFromUrl, uploadDocument } from '../../api/trellis';
import { ErrorNotice } from '../../components/error-notice';
import { useAction } from '../../components/use-async';

interface UploadItem {
  readonly key: string;
  readonly name: string;
  readonly progress: number;
  readonly state: 'uploading' | 'done' | 'failed';
  readonly error?: unknown;
}

/** How many files are sent at once. */
const PARALLEL_UPLOADS = 3;

/** Files in by drag-and-drop or the file picker, each with its own progress bar; documents in by URL. */
export function UploadZone({ knowledgeBase, onUploaded }: { knowledgeBase: string; onUploaded: () => void }) {
  const [items, setItems] = useState<UploadItem[]>([]);
  const [over, setOver] = useState(false);
  const [url, setUrl] = useState('');
  const urlAction = useAction();

  const patch = (key: string, change: Partial<UploadItem>) => setItems((all) => all.map((i) => (i.key === key ? { ...i, ...change } : i)));

  const upload = async (files: File[]) => {
    const batch = files.map((f, i) => ({ file: f, item: { key: `${Date.now()}-${i}-${f.name}`, name: f.name, progress: 0, state: 'uploading' as const } }));
    setItems((all) => [...batch.map((b) => b.item), ...all]);
    const queue = [...batch];
    const worker = async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        const { file, item } = next;
        try {
          await uploadDocument(knowledgeBase, file, (progress) => patch(item.key, { progress }));
          patch(item.key, { state: 'done', progress: 1 });
        } catch (error) {
          patch(item.key, { state: 'failed', error });
        }
        onUploaded();
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_UPLOADS, batch.length) }, worker));
  };

  const drop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    void upload([...e.dataTransfer.files]);
  };

  const addUrl = async (e: FormEvent) => {
    e.preventDefault();
    if (await urlAction.run(() => addDocumentFromUrl(knowledgeBase, url.trim()))) {
      setUrl('');
      onUploaded();
    }
  };

  return (
    <section className="card" aria-labelledby="upload-title">
      <h2 id="upload-title" style={{ marginTop: 0 }}>
        Add documents
      </h2>
      <div
        className={`dropzone${over ? ' over' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={drop}
        data-testid="dropzone"
      >
        <p style={{ margin: '0 0 0.5rem' }}>Drop files here (txt, md, html, pdf, docx), or</p>
        <label htmlFor="file-input" className="inline-field">
          choose files
          <input
            id="file-input"
            type="file"
            multiple
            onChange={(e) => {
              const files = [...(e.target.files ?? [])];
              e.target.value = '';
              if (files.length > 0) void upload(files);
            }}
          />
        </label>
      </div>
      {items.length > 0 ? (
        <ul className="history" aria-label="Uploads" style={{ marginTop: '0.6rem' }}>
          {items.map((i) => (
            <li key={i.key} data-testid="upload-item">
              <span style={{ display: 'inline-block', minWidth: '12rem' }}>{i.name}</span> <progress max={1} value={i.progress} aria-label={`upload of ${i.name}`} />{' '}
              <span className={i.state === 'failed' ? 'status failed' : i.state === 'done' ? 'status graphed' : 'status'}>{i.state === 'uploading' ? `${Math.round(i.progress * 100)}%` : i.state === 'done' ? 'uploaded' : 'failed'}</span>
              {i.error ? <ErrorNotice error={i.error} context={i.name} /> : null}
            </li>
          ))}
        </ul>
      ) : null}
      <form className="actions" onSubmit={addUrl}>
        <label htmlFor="url-input" className="inline-field">
          URL
          <input id="url-input" type="url" required value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://example.org/page.html" style={{ width: '22rem' }} />
        </label>
        <button type="submit" disabled={urlAction.busy}>
          {urlAction.busy ? 'Fetching…' : 'Add URL'}
        </button>
      </form>
      <ErrorNotice error={urlAction.error} context="Add URL" />
    </section>
  );
}
