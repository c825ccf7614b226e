import { describe, expect, it } from 'vitest';
import type { CallPriority, ChatMessage, ChatModel, CompletionOptions } from '@trellis/models';
import type { EntityCandidate } from '@trellis/storage';
import { EntityResolver, parseSameEntityReply } from './entity-resolver';
import type { EntityMention, ResolutionPolicy } from './entity-resolver';

const scope = { tenantId: 't', kbId: 'kb' };
const EMBEDDING: ResolutionPolicy = { mode: 'embedding', similarityThreshold: 0.8, llmMergeDecisions: false, llmMergeFloor: 0.4 };

/** Unit vector at `degrees` in the plane: cosine between two is cos(difference). */
function direction(degrees: number): Float32Array {
  const r = (degrees * Math.PI) / 180;
  return Float32Array.from([Math.cos(r), Math.sin(r)]);
}

function mention(description: string, degrees: number, type = 'planet'): EntityMention {
  return { name: 'Mercury', normalizedName: 'mercury', type, description, embedding: direction(degrees) };
}

function candidate(id: string, description: string, degrees: number, mentionCount = 1): EntityCandidate {
  return {
    entity: { id, kbId: 'kb', name: 'Mercury', normalizedName: 'mercury', type: 'planet', description, mentionCount, needsReview: false },
    embedding: direction(degrees),
  };
}

/** A ChatModel that answers from a list and records the questions. */
class ScriptedLlm implements ChatModel {
  readonly model = 'scripted';
  readonly questions: ChatMessage[][] = [];
  readonly priorities: Array<CallPriority | undefined> = [];
  constructor(private readonly replies: string[]) {}
  async complete(messages: readonly ChatMessage[], options?: CompletionOptions): Promise<string> {
    this.questions.push([...messages]);
    this.priorities.push(options?.priority);
    const reply = this.replies.shift();
    if (reply === undefined) throw new Error('no scripted reply left');
    return reply;
  }
  async *stream(): AsyncIterable<string> {
    throw new Error('not used');
  }
}

const base = EntityResolver.baseId(scope, 'mercury');

describe('EntityResolver', () => {
  it('gives the first entity of a name the name-derived id, in either mode', async () => {
    const resolver = new EntityResolver(null);
    expect(await resolver.resolve(scope, 'c1', [mention('The smallest planet.', 0)], [], EMBEDDING)).toEqual([base]);
    expect(await resolver.resolve(scope, 'c1', [mention('A metal.', 90)], [candidate(base, 'The smallest planet.', 0)], { ...EMBEDDING, mode: 'name' })).toEqual([base]);
  });

  it('keeps the entity the same chunk content resolved to before, while it exists, in embedding mode', async () => {
    const resolver = new EntityResolver(null);
    const planet = candidate(base, 'The smallest planet.', 0);
    const element = candidate('ent-element', 'A liquid metal.', 80);
    // Far from the planet's summary now, yet this text named the planet before.
    const previous = new Map([['mercury', base]]);
    expect(await resolver.resolve(scope, 'c9', [mention('A liquid metal.', 85)], [planet, element], EMBEDDING, previous)).toEqual([base]);
    // Gone (deleted or merged away): resolution decides afresh.
    expect(await resolver.resolve(scope, 'c9', [mention('A liquid metal.', 85)], [element], EMBEDDING, previous)).toEqual(['ent-element']);
  });

  it('joins a same-name entity whose embedding is within the threshold, and keeps a distant one apart', async () => {
    const resolver = new EntityResolver(null);
    const planet = candidate(base, 'The smallest planet.', 0);
    expect(await resolver.resolve(scope, 'c2', [mention('Closest planet to the Sun.', 20)], [planet], EMBEDDING)).toEqual([base]);
    const [element] = await resolver.resolve(scope, 'c3', [mention('A liquid metal.', 80, 'element')], [planet], EMBEDDING);
    expect(element).not.toBe(base);
    // Deterministic: the same mention resolves to the same new id, whoever asks.
    expect(await new EntityResolver(null).resolve(scope, 'c3', [mention('A liquid metal.', 80, 'element')], [planet], EMBEDDING)).toEqual([element]);
  });

  it('picks the closest of several same-name entities', async () => {
    const planet = candidate(base, 'The smallest planet.', 0);
    const element = candidate('ent_element', 'A liquid metal.', 90);
    const resolver = new EntityResolver(null);
    expect(await resolver.resolve(scope, 'c4', [mention('Toxic metal, Hg.', 85, 'element')], [planet, element], EMBEDDING)).toEqual(['ent_element']);
  });

  it('disambiguates a distinct entity by type, then by chunk when that id is taken', async () => {
    const planet = candidate(base, 'The smallest planet.', 0);
    const resolver = new EntityResolver(null);
    const [byType] = await resolver.resolve(scope, 'c5', [mention('A Roman god.', 90, 'deity')], [planet], EMBEDDING);
    const [again] = await resolver.resolve(scope, 'c6', [mention('A Roman god.', 180, 'deity')], [planet, candidate(byType!, 'A Roman god.', 90)], EMBEDDING);
    expect(new Set([base, byType, again]).size).toBe(3);
    // An uninformative type goes straight to the chunk-derived id.
    const [generic] = await resolver.resolve(scope, 'c7', [mention('Something else.', 90, 'concept')], [planet], EMBEDDING);
    expect(generic).not.toBe(byType);
  });

  it('joins by name alone when either side has no description', async () => {
    const resolver = new EntityResolver(null);
    const planet = candidate(base, 'The smallest planet.', 0);
    const element = candidate('ent_element', 'A liquid metal.', 90, 5);
    expect(await resolver.resolve(scope, 'c8', [mention('', 45)], [planet, element], EMBEDDING)).toEqual([base]);
    expect(await resolver.resolve(scope, 'c8', [mention('', 45)], [element], EMBEDDING)).toEqual(['ent_element']);
    const undescribed = candidate(base, '', 0);
    expect(await resolver.resolve(scope, 'c9', [mention('A liquid metal.', 90)], [undescribed], EMBEDDING)).toEqual([base]);
  });

  it('keeps a same-name entity whole when descriptions differ but nothing contradicts it', async () => {
    const resolver = new EntityResolver(null);
    const planet = candidate(base, 'The smallest planet.', 0);
    // cos 60° = 0.5: under the 0.8 threshold, over the 0.4 floor, same type → the same planet.
    expect(await resolver.resolve(scope, 'c20', [mention('Visited by MESSENGER.', 60)], [planet], EMBEDDING)).toEqual([base]);
    // An uninformative type contradicts nothing either.
    expect(await resolver.resolve(scope, 'c21', [mention('Visited by MESSENGER.', 60, 'concept')], [planet], EMBEDDING)).toEqual([base]);
    // Another informative type at the same distance is strong evidence: a distinct entity.
    const [god] = await resolver.resolve(scope, 'c22', [mention('Messenger of the gods.', 60, 'deity')], [planet], EMBEDDING);
    expect(god).not.toBe(base);
    // A description far off (cos 80° ≈ 0.17, under the floor) too, whatever the type.
    const [metal] = await resolver.resolve(scope, 'c23', [mention('A liquid metal.', 80)], [planet], EMBEDDING);
    expect(metal).not.toBe(base);
  });

  it('asks the LLM only in the close band when enabled, and follows its answer', async () => {
    const llm = new ScriptedLlm(['```json\n{"same": true}\n```', 'No, these are different things.']);
    const resolver = new EntityResolver(llm);
    const planet = candidate(base, 'The smallest planet.', 0);
    const policy = { ...EMBEDDING, llmMergeDecisions: true };
    // cos 50° ≈ 0.64: below 0.8, above 0.4 → asked, "same".
    expect(await resolver.resolve(scope, 'c10', [mention('Named after a god.', 50)], [planet], policy)).toEqual([base]);
    expect(llm.questions[0]!.map((m) => m.content).join('\n')).toContain('The smallest planet.');
    // The graph write waits for the answer: ahead of new extraction calls for a slot.
    expect(llm.priorities[0]).toBe('follow-up');
    // Asked again, "no" → a distinct entity.
    const [distinct] = await resolver.resolve(scope, 'c11', [mention('Named after a god.', 50)], [planet], policy);
    expect(distinct).not.toBe(base);
    // cos 80° ≈ 0.17: below the floor, not asked; above the threshold, not asked either.
    await resolver.resolve(scope, 'c12', [mention('A liquid metal.', 80)], [planet], policy);
    await resolver.resolve(scope, 'c13', [mention('The smallest planet, again.', 5)], [planet], policy);
    expect(resolver.llmDecisions).toBe(2);
    // Disabled: never asked.
    const quiet = new EntityResolver(llm);
    await quiet.resolve(scope, 'c14', [mention('Named after a god.', 50)], [planet], EMBEDDING);
    expect(quiet.llmDecisions).toBe(0);
  });

  it('keeps entities apart when the LLM fails', async () => {
    const failures: Error[] = [];
    const resolver = new EntityResolver(new ScriptedLlm([]), (e) => failures.push(e));
    const [id] = await resolver.resolve(scope, 'c15', [mention('Named after a god.', 50)], [candidate(base, 'The smallest planet.', 0)], { ...EMBEDDING, llmMergeDecisions: true });
    expect(id).not.toBe(base);
    expect(failures).toHaveLength(1);
  });
});

describe('parseSameEntityReply', () => {
  it.each([
    ['{"same": true}', true],
    ['{"same": false}', false],
    ['Sure! ```json\n{ "merge": "yes" }\n```', true],
    ['{"answer": "no"}', false],
    ['Yes.', true],
    ['No', false],
    ['yes and no', false],
    ['I cannot tell.', false],
    ['{broken json, but yes', true],
  ])('%j → %s', (reply, expected) => {
    expect(parseSameEntityReply(reply)).toBe(expected);
  });
});
