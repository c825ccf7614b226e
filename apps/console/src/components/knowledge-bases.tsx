import { createContext, useContext, useEffect, useState } from 'react';
import type { ReactNode } from 'react';
import { listKnowledgeBases } from '../api/trellis';
import type { KnowledgeBase } from '../api/types';
import { ErrorNotice } from './error-notice';
import { useAsync } from './use-async';
import type { AsyncState } from './use-async';

const SELECTED_STORAGE = 'trellis.knowledgeBase';

interface KnowledgeBases {
  readonly list: AsyncState<KnowledgeBase[]>;
  /** The knowledge base the pages work on (name), remembered across visits. */
  readonly selected: string;
  select(name: string): void;
}

const Context = createContext<KnowledgeBases | undefined>(undefined);

/** The caller's knowledge bases, loaded once for every page (and again after a change or a new API key). */
export function KnowledgeBaseProvider({ apiKeyVersion, children }: { apiKeyVersion: number; children: ReactNode }) {
  const list = useAsync(listKnowledgeBases, [apiKeyVersion]);
  const [selected, setSelected] = useState(() => localStorage.getItem(SELECTED_STORAGE) ?? '');
  const select = (name: string) => {
    setSelected(name);
    localStorage.setItem(SELECTED_STORAGE, name);
  };
  const names = list.data?.map((kb) => kb.name);
  useEffect(() => {
    if (names !== undefined && names.length > 0 && !names.includes(selected)) select(names[0]!);
  });
  return <Context.Provider value={{ list, selected: names?.includes(selected) ? selected : '', select }}>{children}</Context.Provider>;
}

export function useKnowledgeBases(): KnowledgeBases {
  const value = useContext(Context);
  if (value === undefined) throw new Error('useKnowledgeBases outside KnowledgeBaseProvider');
  return value;
}

/** The knowledge-base picker of a page; says so when there is none yet or the list failed. */
export function KnowledgeBaseSelect({ id = 'kb-select' }: { id?: string }) {
  const { list, selected, select } = useKnowledgeBases();
  if (list.error !== undefined) return <ErrorNotice error={list.error} context="Knowledge bases" />;
  if (list.data !== undefined && list.data.length === 0) return <p className="muted">No knowledge base yet: create one on the Knowledge bases page.</p>;
  return (
    <label className="inline-field" htmlFor={id}>
      Knowledge base
      <select id={id} value={selected} onChange={(e) => select(e.target.value)} disabled={list.data === undefined}>
        {(list.data ?? []).map((kb) => (
          <option key={kb.id} value={kb.name}>
            {kb.name}
          </option>
        ))}
      </select>
    </label>
  );
}
