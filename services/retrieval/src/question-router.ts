/**
 * Which scope answers a question in "auto": global (community reports) for questions about
 * the corpus as a whole, local (graph → chunks) for everything else. The rule is a list of
 * phrases that ask about the whole collection rather than about something in it; it is
 * written down, not fitted to any data set, and every decision names the phrase it matched.
 * A similarity threshold (best chunk too far from the question) was left out on purpose: it
 * would be a constant tuned to one embedding model and one corpus.
 */
export type Route = 'local' | 'global';

export interface RouteDecision {
  readonly route: Route;
  readonly reason: string;
}

const CORPUS_WIDE_CUES: readonly RegExp[] = [
  /\b(?:main|key|major|central|recurring|common|overarching) (?:themes?|topics?|subjects?|threads?|ideas?|patterns?)\b/,
  /\bwhat (?:themes?|topics?|subjects?) (?:are|do|does|appear)\b/,
  /\bwhich (?:themes?|topics?|subjects?)\b/,
  /\bacross (?:all|the (?:whole|entire) |the )?(?:documents?|corpus|collection|knowledge base|passages?|articles?|sources?)\b/,
  /\bacross all\b/,
  /\b(?:in|of) (?:all|every one of) (?:the|these|those) (?:documents?|passages?|articles?|sources?)\b/,
  /\b(?:the )?(?:whole|entire) (?:corpus|collection|knowledge base|data ?set)\b/,
  /\boverall\b/,
  /\bin general\b/,
  /\b(?:overview|big picture)\b/,
  /\bsummari[sz]e (?:the|these|this|all)\b/,
  /\bwhich\b.*\ball\b/,
];

export function routeQuestion(question: string, communities: number): RouteDecision {
  if (communities === 0) return { route: 'local', reason: 'no communities built for this knowledge base' };
  const text = question.toLowerCase().replace(/\s+/g, ' ');
  for (const cue of CORPUS_WIDE_CUES) {
    const match = cue.exec(text);
    if (match) return { route: 'global', reason: `corpus-wide cue "${match[0]}"` };
  }
  return { route: 'local', reason: 'no corpus-wide cue: a question about something in the corpus' };
}
