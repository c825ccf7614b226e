import { useState } from 'react';
import type { FormEvent } from 'react';
import { updateKnowledgeBase } from '../../api/trellis';
import type { KnowledgeBase } from '../../api/types';
import { ErrorNotice } from '../../components/error-notice';
import { useAction } from '../../components/use-async';

/**
 * The settings UpdateKnowledgeBase changes: description, LLM model, extraction prompt and
 * entity resolution. Chunking and embeddings are fixed at creation and shown read-only.
 */
export function SettingsForm({ kb, onSaved }: { kb: KnowledgeBase; onSaved: () => void }) {
  const [description, setDescription] = useState(kb.description);
  const [llmModel, setLlmModel] = useState(kb.models.llmModel);
  const [entityTypes, setEntityTypes] = useState(kb.extraction.entityTypes.join(', '));
  const [instructions, setInstructions] = useState(kb.extraction.instructions);
  const [examples, setExamples] = useState(kb.extraction.examples);
  const [gleaning, setGleaning] = useState(kb.extraction.gleaningPasses);
  const [outputMode, setOutputMode] = useState(kb.extraction.outputMode);
  const [resolution, setResolution] = useState(kb.resolution);
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setSaved(false);
    const ok = await action.run(() =>
      updateKnowledgeBase(kb.name, {
        description,
        llmModel,
        extraction: {
          entityTypes: entityTypes.split(',').map((t) => t.trim()).filter(Boolean),
          instructions,
          examples,
          gleaningPasses: gleaning,
          outputMode,
        },
        resolution,
      }),
    );
    setSaved(ok);
    if (ok) onSaved();
  };
  const num = (value: string) => (value === '' ? 0 : Number(value));
  return (
    <form className="card" onSubmit={submit} aria-labelledby="settings-title">
      <h2 id="settings-title" style={{ marginTop: 0 }}>
        Settings
      </h2>
      <p className="muted">
        Chunking: {kb.chunking.chunkSizeTokens || 'default'} tokens, overlap {kb.chunking.chunkOverlapTokens || 'default'}, splitter {kb.chunking.splitter || 'by type'} · embeddings{' '}
        {kb.models.embeddingModel || 'default'} ({kb.models.embeddingDimensions || '?'} dims) · server: {kb.serverEmbedding.model}
        {kb.serverEmbedding.fallback ? ` (fallback: ${kb.serverEmbedding.fallback})` : ''}. New settings apply to documents indexed from now on; reindex to apply them to the rest.
      </p>
      <div className="form-grid">
        <label>
          Description
          <input value={description} onChange={(e) => setDescription(e.target.value)} />
        </label>
        <label>
          LLM model
          <input value={llmModel} onChange={(e) => setLlmModel(e.target.value)} placeholder="server default" />
        </label>
        <label>
          Entity types (comma-separated)
          <input value={entityTypes} onChange={(e) => setEntityTypes(e.target.value)} placeholder="the model chooses" />
        </label>
        <label>
          Gleaning passes
          <select value={gleaning} onChange={(e) => setGleaning(Number(e.target.value))}>
            <option value={0}>0</option>
            <option value={1}>1</option>
          </select>
        </label>
        <label>
          Output mode
          <select value={outputMode} onChange={(e) => setOutputMode(e.target.value)}>
            <option value="">auto</option>
            <option value="json_schema">json_schema</option>
            <option value="json_object">json_object</option>
          </select>
        </label>
        <label>
          Resolution mode
          <select value={resolution.mode} onChange={(e) => setResolution({ ...resolution, mode: e.target.value })}>
            <option value="">server default</option>
            <option value="name">name</option>
            <option value="embedding">embedding</option>
          </select>
        </label>
        <label>
          Similarity threshold (0..1)
          <input type="number" step="0.01" min={0} max={1} value={resolution.similarityThreshold || ''} onChange={(e) => setResolution({ ...resolution, similarityThreshold: num(e.target.value) })} />
        </label>
        <label>
          LLM merge decisions
          <select value={resolution.llmMergeDecisions} onChange={(e) => setResolution({ ...resolution, llmMergeDecisions: e.target.value })}>
            <option value="">server default</option>
            <option value="on">on</option>
            <option value="off">off</option>
          </select>
        </label>
        <label>
          LLM merge floor (0..1)
          <input type="number" step="0.01" min={0} max={1} value={resolution.llmMergeFloor || ''} onChange={(e) => setResolution({ ...resolution, llmMergeFloor: num(e.target.value) })} />
        </label>
        <label>
          Summary max characters
          <input type="number" min={0} value={resolution.summaryMaxChars || ''} onChange={(e) => setResolution({ ...resolution, summaryMaxChars: num(e.target.value) })} />
        </label>
      </div>
      <label>
        Extraction instructions
        <textarea rows={2} value={instructions} onChange={(e) => setInstructions(e.target.value)} />
      </label>
      <label>
        Extraction examples
        <textarea rows={2} value={examples} onChange={(e) => setExamples(e.target.value)} />
      </label>
      <ErrorNotice error={action.error} context="Save settings" />
      <div className="actions">
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Saving…' : 'Save settings'}
        </button>
        {saved ? <span role="status">Saved.</span> : null}
      </div>
    </form>
  );
}
