import { createHash } from 'node:crypto';
import type { CommunityEntity, CommunityRelationship } from './community-records';

/**
 * What a community's report is written from, per entity: its name, type and description and
 * every relationship it takes part in (with weight and description). A change to any of them —
 * a document added, re-indexed or deleted, a merge, a deletion, a new weight — changes the
 * signature of each entity it touches, hence the content hash of each community holding one.
 */
export function entitySignatures(entities: readonly CommunityEntity[], relationships: readonly CommunityRelationship[]): Map<string, string> {
  const incident = new Map<string, string[]>();
  for (const r of relationships) {
    const line = `${r.id}\u0002${r.sourceId}\u0002${r.targetId}\u0002${r.weight}\u0002${r.label}\u0002${r.description}`;
    for (const end of [r.sourceId, r.targetId]) {
      const lines = incident.get(end);
      if (lines) lines.push(line);
      else incident.set(end, [line]);
    }
  }
  return new Map(entities.map((e) => [e.id, [e.name, e.type, e.description, ...(incident.get(e.id) ?? []).sort()].join('\u0001')]));
}

/** The content hash of a set of entities: equal exactly when their signatures are. */
export function contentHashOf(memberIds: readonly string[], signatures: ReadonlyMap<string, string>): string {
  const hash = createHash('sha256');
  for (const id of [...memberIds].sort()) {
    hash.update(id);
    hash.update('\u0000');
    hash.update(signatures.get(id) ?? '');
    hash.update('\u0000');
  }
  return hash.digest('hex');
}

/**
 * The content hash of a community above level 0: of its children's hashes. It changes exactly
 * when a member's signature changes (that changes the hash of the child holding it) or the
 * children change, as a hash of all members would, and it needs no member's content: a refresh
 * inside a large branch computes the path's ancestors without reading the rest of the branch.
 */
export function childrenHashOf(childHashes: readonly string[]): string {
  const hash = createHash('sha256');
  hash.update('children\u0000');
  for (const h of [...childHashes].sort()) hash.update(`${h}\u0000`);
  return hash.digest('hex');
}
