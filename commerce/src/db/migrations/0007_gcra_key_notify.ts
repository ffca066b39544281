import { type Kysely, sql } from "kysely";

// The shared rate limit as GCRA (one theoretical arrival time per credential) leased to replicas
// in batches by one function call, and a notification on channel commerce_api_key_changed when an
// API key is revoked, changed or deleted (for replicas that cache keys). The fixed-window counter
// table of 0002 stays for older pods during a rolling upgrade; this version no longer writes it.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create unlogged table rate_limit_buckets (
      key text primary key,
      tat timestamptz not null
    );

    -- Gives back p_return unspent tokens of an earlier lease, then leases up to p_want tokens (at
    -- least p_need, else none) of the bucket p_key: p_burst tokens deep, one token per p_interval
    -- seconds (GCRA: n tokens are admitted when the theoretical arrival time after them is at most
    -- p_burst intervals ahead of now). Grants at most p_share of what is left (but p_need), so
    -- replicas leasing near the limit hold few tokens each. Returns the tokens granted, those left
    -- in the bucket, the seconds until p_need tokens are available (when none were granted) and
    -- until the bucket is full again.
    create function rate_limit_lease(
      p_key text, p_interval double precision, p_burst integer, p_need integer, p_want integer,
      p_share double precision, p_return integer,
      out granted integer, out available integer, out wait_seconds double precision,
      out full_seconds double precision
    ) language plpgsql as $$
    declare
      t timestamptz;
      n timestamptz;
      ahead double precision;
    begin
      select b.tat into t from rate_limit_buckets b where b.key = p_key for update;
      if not found then
        insert into rate_limit_buckets (key, tat) values (p_key, 'epoch') on conflict (key) do nothing;
        select b.tat into t from rate_limit_buckets b where b.key = p_key for update;
      end if;
      n := clock_timestamp();
      t := t - make_interval(secs => p_return * p_interval);
      ahead := greatest(0, extract(epoch from (t - n)));
      available := greatest(0, floor((p_burst * p_interval - ahead) / p_interval + 1e-9))::integer;
      if available >= p_need then
        granted := least(p_want, available, greatest(p_need, floor(available * p_share)::integer));
        wait_seconds := 0;
      else
        granted := 0;
        wait_seconds := ahead + p_need * p_interval - p_burst * p_interval;
      end if;
      available := available - granted;
      ahead := ahead + granted * p_interval;
      full_seconds := ahead;
      if granted > 0 or p_return > 0 then
        update rate_limit_buckets set tat = n + make_interval(secs => ahead) where key = p_key;
      end if;
    end $$;

    create function api_key_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('commerce_api_key_changed', old.hash);
      return null;
    end $$;
    create trigger api_key_changed after update of revoked_at, scopes, hash or delete on api_keys
      for each row execute function api_key_changed();
  `.execute(db);
}
