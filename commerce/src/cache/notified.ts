import pg from "pg";
import type client from "prom-client";

// A cache per replica, invalidated across replicas through PostgreSQL LISTEN/NOTIFY: a change
// notifies its channel with the entry's key in its own transaction (delivered at commit), and
// every replica drops that entry. The cache is used only while the listening connection is up;
// after a reconnect it starts empty (notifications may have been missed). A read that raced with
// an invalidation is not stored (generation check), so a stale entry never outlives the
// notification. Loads answering `undefined` are not stored.

export class NotifiedCache<T> {
  private readonly entries = new Map<string, T>();
  private generation = 0;
  private listener?: pg.Client;
  private connected = false;
  private stopped = false;
  private readonly url: string;
  private readonly channel: string;
  private readonly maxEntries: number;
  private readonly requests?: client.Counter<"result">;

  constructor(
    url: string,
    channel: string,
    opts: { maxEntries: number; requests?: client.Counter<"result"> },
  ) {
    this.url = url;
    this.channel = channel;
    this.maxEntries = opts.maxEntries;
    this.requests = opts.requests;
  }

  async start(): Promise<void> {
    const c = new pg.Client({ connectionString: this.url });
    c.on("notification", (n) => {
      this.generation++;
      if (n.payload) this.entries.delete(n.payload);
    });
    c.on("error", () => this.reconnect(c));
    c.on("end", () => this.reconnect(c));
    await c.connect();
    await c.query(`listen ${this.channel}`);
    this.listener = c;
    this.entries.clear();
    this.generation++;
    this.connected = true;
  }

  private reconnect(c: pg.Client): void {
    if (this.listener !== c || this.stopped) return;
    this.connected = false;
    this.listener = undefined;
    this.entries.clear();
    setTimeout(() => void this.start().catch(() => this.reconnect(c)), 1000).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.connected = false;
    await this.listener?.end().catch(() => {});
  }

  /**
   * Drops an entry this replica itself changed, at once: its own notification arrives on the
   * listening connection a moment after the commit, and a request in that moment must not be
   * answered from the old entry (read-your-writes on the replica that made the change).
   */
  forget(id: string): void {
    this.generation++;
    this.entries.delete(id);
  }

  /** The entry from the cache, else from `load` (stored unless an invalidation raced it). */
  async get(id: string, load: () => Promise<T>): Promise<T> {
    if (!this.connected) {
      this.requests?.inc({ result: "bypass" });
      return load();
    }
    const hit = this.entries.get(id);
    if (hit !== undefined) {
      this.requests?.inc({ result: "hit" });
      return hit;
    }
    this.requests?.inc({ result: "miss" });
    const gen = this.generation;
    const value = await load();
    if (value !== undefined && gen === this.generation && this.connected) {
      if (this.entries.size >= this.maxEntries)
        this.entries.delete(this.entries.keys().next().value as string);
      this.entries.set(id, value);
    }
    return value;
  }
}
