import { useState } from 'react';
import type { FormEvent } from 'react';
import { createKnowledgeBase } from '../../api/trellis';
import { ErrorNotice } from '../../components/error-notice';
import { useAction } from '../../components/use-async';

/** New knowledge base: name, description, chunking and LLM model (the rest is edited once it exists). */
export function CreateKnowledgeBaseForm({ onCreated }: { onCreated: (name: string) => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [chunkSize, setChunkSize] = useState('');
  const [overlap, setOverlap] = useState('');
  const [splitter, setSplitter] = useState('');
  const [llmModel, setLlmModel] = useState('');
  const action = useAction();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const ok = await action.run(() =>
      createKnowledgeBase({
        name: name.trim(),
        description,
        chunking: { chunkSizeTokens: Number(chunkSize) || 0, chunkOverlapTokens: Number(overlap) || 0, splitter },
        models: llmModel ? { llmModel } : {},
      }),
    );
    if (ok) {
      onCreated(name.trim());
      setName('');
      setDescription('');
    }
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="create-kb-title">
      <h2 id="create-kb-title" style={{ marginTop: 0 }}>
        New knowledge base
      </h2>
      <div className="form-grid">
        <label>
          Name
          <input required value={name} onChange={(e) => setName(e.target.value)} pattern="[A-Za-z0-9_.\-]{1,64}" title="letters, digits, '-', '_' and '.', 1-64 characters" />
        </label>
        <label>
          Description
          <input value={description} onChange={(e) => setDescription(e.target.value)} />
        </label>
        <label>
          Chunk size (tokens, empty: 512)
          <input type="number" min={0} value={chunkSize} onChange={(e) => setChunkSize(e.target.value)} />
        </label>
        <label>
          Chunk overlap (tokens, empty: 64)
          <input type="number" min={0} value={overlap} onChange={(e) => setOverlap(e.target.value)} />
        </label>
        <label>
          Splitter
          <select value={splitter} onChange={(e) => setSplitter(e.target.value)}>
            <option value="">by document type</option>
            <option value="sentence">sentence</option>
            <option value="markdown">markdown</option>
          </select>
        </label>
        <label>
          LLM model (empty: server default)
          <input value={llmModel} onChange={(e) => setLlmModel(e.target.value)} />
        </label>
      </div>
      <ErrorNotice error={action.error} context="Create" />
      <div className="actions">
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Creating…' : 'Create'}
        </button>
      </div>
    </form>
  );
}
