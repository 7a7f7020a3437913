/**
 * The one search term the backends add themselves: the entry's project.
 * With it inside the search index, a term query narrows to its project (or
 * to a group's projects, ORed) within the index itself instead of row by
 * row or through a second index. `§p` + id cannot equal a word (no `§`) nor
 * an exact-match term (`§` + hex digits only).
 */
export function projectTerm(projectId: number): string {
  return `§p${projectId}`;
}

/** Groups up to this many projects name them inside the index query; larger ones filter rows instead. */
export const MAX_PROJECT_TERMS = 64;
