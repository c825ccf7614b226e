import type { v1 } from '@trellis/contracts';
import { questionNames } from '@trellis/models';
import { fullTextTerms } from '@trellis/text-search';

/** The follow-up question rewritten to stand alone, and how. */
export interface Condensed {
  readonly question: string;
  /** "unchanged", "rules" (the deterministic rewrite) or "model" (a language model's rewrite). */
  readonly method: 'unchanged' | 'rules' | 'model';
  /** Why the model's rewrite was not used, when it was not. */
  readonly fallbackReason?: string;
}

/** Rewrites a follow-up question with the conversation before it, so retrieval can use it alone. */
export interface QuestionCondenser {
  condense(question: string, history: readonly v1.ChatMessage[], prompt?: string): Promise<Condensed>;
}

/** Words that point back at something named earlier. */
const REFERRING = /\b(it|its|it's|itself|they|them|their|theirs|themselves|he|him|his|himself|she|her|hers|herself|there|these|those|the latter|the former|this one|that one)\b/i;
/** Pronouns of people: what the answer to a "who" question introduces ("Where was he born?"). */
const PERSONAL = /\b(he|him|his|himself|she|her|hers|herself|they|them|their|theirs|themselves)\b/i;
/** Openings of an elliptical follow-up ("and its population?", "what about Berlin?"). */
const ELLIPTICAL_OPENING = /^\s*(and|also|what about|how about|and what about|what else|anything else|same for|then)\b/i;
/** A short question with no name of its own leans on the previous one. */
const SHORT_FOLLOW_UP_WORDS = 4;
const MAX_CARRIED_NAMES = 5;
/** Names taken from the previous answer, after the previous question's. */
const MAX_ANSWER_NAMES = 2;
const MAX_CARRIED_TERMS = 4;

/**
 * The condensation without a language model. A follow-up that refers back (a pronoun: "it",
 * "its", "they", "he", "there"...) or is elliptical ("and its population?", or a few words
 * without a name) gets the previous turn's names appended — the proper names of the previous
 * question ("When was it founded? (Radium Institute)"), and, when the follow-up points at a
 * person ("Where was he born?") or the question named nothing, up to two of the previous
 * answer's first sentence ("Where was he born? (Prestige, Christopher Nolan)"); a previous
 * turn without names lends the question's key words. An
 * elliptical follow-up that brings a name of its own ("what about Berlin?") takes the previous
 * question with its first name replaced ("What is the population of Berlin?"). Anything else is
 * a question of its own and is left as asked.
 */
export class RuleQuestionCondenser implements QuestionCondenser {
  async condense(question: string, history: readonly v1.ChatMessage[]): Promise<Condensed> {
    const rewritten = condenseWithRules(question, history);
    return { question: rewritten, method: rewritten === question ? 'unchanged' : 'rules' };
  }
}

export function condenseWithRules(question: string, history: readonly v1.ChatMessage[]): string {
  const previous = [...history].reverse().find((m) => m.role === 'user')?.content;
  if (previous === undefined || previous.trim() === '') return question;
  const answer = [...history].reverse().find((m) => m.role === 'assistant')?.content ?? '';
  const ownNames = questionNames(question);
  const elliptical = ELLIPTICAL_OPENING.test(question);
  const referring = REFERRING.test(question);
  if (elliptical && !referring && ownNames.length > 0) {
    const swapped = swapFirstName(previous, ownNames.join(' and '));
    if (swapped !== null) return swapped;
  }
  const short = ownNames.length === 0 && (question.match(/[\p{L}\p{N}]+/gu) ?? []).length <= SHORT_FOLLOW_UP_WORDS;
  if (!referring && !elliptical && !short) return question;
  // The answer's names join when the follow-up points at a person, or the question named nothing.
  const names = previousNames(previous, PERSONAL.test(question) || questionNames(previous).length === 0 ? answer : '');
  const asked = question.toLowerCase();
  // Names the follow-up already mentions are not added again; without any names, key words are.
  const additions = names.length > 0 ? names.filter((n) => !asked.includes(n.toLowerCase())).slice(0, MAX_CARRIED_NAMES) : carriedTerms(question, previous);
  return additions.length === 0 ? question : `${question} (${additions.join(', ')})`;
}

/** The previous question with its first name replaced by the follow-up's, or null without one. */
function swapFirstName(previous: string, replacement: string): string | null {
  const [first] = questionNames(previous);
  if (first === undefined) return null;
  const at = previous.indexOf(first);
  return `${previous.slice(0, at)}${replacement}${previous.slice(at + first.length)}`;
}

/**
 * The previous question's proper names, then up to two new ones of the first sentence of its
 * answer — names of several words first ("Christopher Nolan" before "British-American"), dates'
 * month and day names never.
 */
function previousNames(previous: string, answer: string): string[] {
  const names: string[] = [];
  const add = (phrase: string): boolean => {
    // A sentence's opening article joins the name it precedes ("The Radium Institute").
    const name = phrase.replace(/^(The|A|An)\s+/, '').replace(/['’]s$/, '');
    const lower = name.toLowerCase();
    if (name.length < 3 || CALENDAR_WORDS.has(lower) || names.some((n) => n.toLowerCase().includes(lower))) return false;
    // The fuller name takes the place of a part of it ("Marie Curie" for "Curie").
    const part = names.findIndex((n) => lower.includes(n.toLowerCase()));
    if (part >= 0) names[part] = name;
    else names.push(name);
    return true;
  };
  for (const name of questionNames(previous)) add(name);
  const firstSentence = answer.replace(/\[\d{1,3}\]/g, ' ').split(/(?<=[.!?])\s/)[0] ?? '';
  const words = (name: string) => name.split(/\s+/).length;
  const candidates = questionNames(firstSentence).sort((a, b) => Number(words(b) > 1) - Number(words(a) > 1));
  let added = 0;
  for (const name of candidates) if (added < MAX_ANSWER_NAMES && add(name)) added++;
  return names;
}

const CALENDAR_WORDS = new Set([
  'january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december',
  'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday',
]);

function carriedTerms(question: string, previous: string): string[] {
  const asked = new Set(fullTextTerms(question));
  return fullTextTerms(previous)
    .filter((t) => !asked.has(t) && !QUESTION_WORDS.has(t))
    .slice(0, MAX_CARRIED_TERMS);
}

const QUESTION_WORDS = new Set(['what', 'which', 'who', 'whom', 'whose', 'when', 'where', 'why', 'how', 'does', 'did', 'do', 'is', 'are', 'was', 'were']);
