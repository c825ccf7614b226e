import type { KbSettings } from '@trellis/contracts';
import type { SplitOptions, TextChunk } from './text-splitter';

const DEFAULT_CHUNK_SIZE = 512;
const DEFAULT_OVERLAP = 64;

/**
 * How a knowledge base splits one document: its chunk size and overlap (server defaults when 0),
 * and its splitter, or, when it names none, markdown for markdown documents and sentences for
 * the rest. Chunking and the ingest estimate both split with this, so an estimate counts the
 * chunks indexing will make.
 */
export function splitOptionsFor(settings: Pick<KbSettings, 'chunkSizeTokens' | 'chunkOverlapTokens' | 'splitter'>, mimeType: string): SplitOptions {
  const mode = settings.splitter === 'sentence' || settings.splitter === 'markdown' ? settings.splitter : mimeType === 'text/markdown' ? 'markdown' : 'sentence';
  return { chunkSize: settings.chunkSizeTokens || DEFAULT_CHUNK_SIZE, overlap: settings.chunkOverlapTokens || DEFAULT_OVERLAP, mode };
}

/** The text a chunk's embedding is made from: its heading path, when it has one, and its text. */
export function embeddingText(chunk: Pick<TextChunk, 'heading' | 'text'>): string {
  return chunk.heading ? `${chunk.heading}\n${chunk.text}` : chunk.text;
}
