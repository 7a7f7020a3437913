/**
 * Rows of single sign-on: identities (a user linked to an OpenID provider's
 * subject), the one-time codes the console exchanges for tokens, and the
 * mapping of provider groups to teams that administrators set.
 */

/** A logkeep user linked to one subject of one issuer; (issuer, subject) is unique. */
export interface IdentityRow {
  id: number;
  userId: number;
  issuer: string;
  subject: string;
  createdAt: number;
  /** The last single sign-on through this identity, null before the first. */
  lastLoginAt: number | null;
  /** The provider groups of that sign-in (what refreshes re-apply), null before the first. */
  groups: string[] | null;
  /** The admin grant the admin claim made, while it stands (the claim's loss revokes it). */
  adminGrantId: number | null;
}

export interface NewIdentity {
  userId: number;
  issuer: string;
  subject: string;
  createdAt: number;
}

/** What one sign-in records on its identity. */
export interface IdentitySeen {
  lastLoginAt: number;
  groups: string[];
  adminGrantId: number | null;
}

/** One pair of the group-to-team mapping. */
export interface GroupTeamRow {
  providerGroup: string;
  teamId: number;
}
