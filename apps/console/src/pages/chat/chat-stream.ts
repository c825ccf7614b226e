import { ApiError } from '../../api/http';
import { chatEvents } from '../../api/trellis';
import type { ChatTurnRequest } from '../../api/trellis';
import type { Answer, Citation, StageEvent } from '../../api/types';

/** One knowledge base's answer to one question, as it streams in. */
export interface StreamedAnswer {
  readonly knowledgeBase: string;
  readonly stages: readonly StageEvent[];
  readonly text: string;
  readonly citations: readonly Citation[];
  readonly done?: Answer;
  readonly error?: unknown;
}

export function emptyAnswer(knowledgeBase: string): StreamedAnswer {
  return { knowledgeBase, stages: [], text: '', citations: [] };
}

/**
 * Reads the chat stream of one knowledge base (`stage`, `token`, `citation`, `done`, `error`
 * events, each carrying the ChatEvent's JSON), calling `update` with the answer so far after
 * every event.
 */
export async function streamAnswer(knowledgeBase: string, request: ChatTurnRequest, update: (answer: StreamedAnswer) => void, signal?: AbortSignal): Promise<StreamedAnswer> {
  let answer = emptyAnswer(knowledgeBase);
  const set = (next: StreamedAnswer) => {
    answer = next;
    update(answer);
  };
  try {
    for await (const { event, data } of chatEvents(knowledgeBase, request, signal)) {
      const payload = JSON.parse(data) as Record<string, unknown>;
      switch (event) {
        case 'stage':
          set({ ...answer, stages: [...answer.stages, payload['stage'] as StageEvent] });
          break;
        case 'token':
          set({ ...answer, text: answer.text + String(payload['token'] ?? '') });
          break;
        case 'citation':
          set({ ...answer, citations: [...answer.citations, payload['citation'] as Citation] });
          break;
        case 'done': {
          const done = payload['done'] as Answer;
          set({ ...answer, done, text: done.text || answer.text, citations: done.citations.length > 0 ? done.citations : answer.citations });
          break;
        }
        case 'error': {
          const problem = payload as { status?: number; title?: string; detail?: string };
          set({ ...answer, error: new ApiError(problem.status ?? 500, problem.title ?? 'Error', problem.detail ?? 'the answer failed') });
          break;
        }
        default:
          break;
      }
    }
    if (answer.done === undefined && answer.error === undefined) set({ ...answer, error: new ApiError(0, 'Incomplete', 'the answer stream ended before its last event') });
  } catch (error) {
    set({ ...answer, error });
  }
  return answer;
}

/** What the graph stage reported (the `refinement` stage detail: how many relationships it found). */
export function graphContextOf(answer: StreamedAnswer): string | undefined {
  const detail = answer.stages.find((s) => s.name === 'refinement')?.detail ?? answer.stages.find((s) => s.name === 'community_retrieval')?.detail;
  return detail === undefined || detail.trim() === '' ? undefined : detail;
}
