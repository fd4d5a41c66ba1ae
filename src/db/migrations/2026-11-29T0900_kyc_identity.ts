import { type Kysely, sql } from 'kysely';

// One NIN verifies one person, and the name others see is the verified one (issue 25 items 3, 4):
// - kyc_submissions.nin_hash: the keyed hash of a Tier 2 submission's NIN (it was only in
//   details), with a unique index over the pending and approved ones, so an NIN can be held by one
//   account at a time however many submit it at once. Rejected submissions hold nothing.
// - users.name_verified_at: set when Tier 2 is approved, together with the profile names that
//   matched the NIN record; from then on the names no longer change.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table kyc_submissions add column nin_hash text`.execute(db);
  await sql`alter table kyc_submissions add constraint kyc_submissions_nin_hash_tier2
    check (nin_hash is null or tier = 2)`.execute(db);
  await sql`update kyc_submissions set nin_hash = details->>'ninHash'
    where tier = 2 and details->>'ninHash' is not null`.execute(db);
  // NINs approved on several accounts before this rule: the first account keeps the claim. The
  // later ones stay approved (a migration does not take a tier away), without holding the NIN.
  await sql`update kyc_submissions s set nin_hash = null
    where s.nin_hash is not null and s.status in ('pending', 'approved') and exists (
      select 1 from kyc_submissions e
      where e.nin_hash = s.nin_hash and e.status in ('pending', 'approved')
        and (e.created_at, e.id) < (s.created_at, s.id))`.execute(db);
  await sql`create unique index kyc_submissions_one_nin_idx on kyc_submissions (nin_hash)
    where status in ('pending', 'approved')`.execute(db);

  await sql`alter table users add column name_verified_at timestamptz`.execute(db);
  // Users already at Tier 2: their names become the NIN record's, unless the profile names are the
  // record's first and last names already (in either order, any case), which keep their spelling.
  // A profile renamed after approval gets the record's names (in initial capitals) instead.
  const same = sql`coalesce(
    (lower(u.first_name) = lower(r.first) and lower(u.last_name) = lower(r.last))
    or (lower(u.first_name) = lower(r.last) and lower(u.last_name) = lower(r.first)), false)`;
  await sql`update users u set
      first_name = case when ${same} then u.first_name else initcap(r.first) end,
      last_name = case when ${same} then u.last_name else initcap(r.last) end,
      name_verified_at = r.verified_at,
      updated_at = r.verified_at
    from (
      select s.user_id, s.details->'ninName'->>'firstName' as first,
        s.details->'ninName'->>'lastName' as last, coalesce(s.decided_at, s.created_at) as verified_at
      from kyc_submissions s
      where s.tier = 2 and s.status = 'approved'
        and s.details->'ninName'->>'firstName' is not null and s.details->'ninName'->>'lastName' is not null
    ) r
    where u.id = r.user_id`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('the kyc identity migration is not reversible');
}
