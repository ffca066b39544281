// The platform's own figures (requests, response time, errors, cache hits, network, database
// size) from the Prometheus text each app pod serves on /metrics, read by the viewer through the
// API server's pod proxy (kube.ts appMetrics). Counters only give rates as the difference of two
// samples, so the last samples of each platform are kept in this process (MetricsHistory).
//
// The parser is written here because the one npm parser of the text format
// (parse-prometheus-text-format) has had no release in years and ships no types, while what is
// needed is small: the sample lines `name{label="value",...} value [timestamp]` of a few counter,
// gauge and histogram families (https://prometheus.io/docs/instrumenting/exposition_formats/).

/** One sample line of the text exposition format. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The sample lines of a text-format exposition (comments, blank and malformed lines skipped). */
export function parsePromText(text: string): PromSample[] {
  const out: PromSample[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line);
    if (!m?.[1]) continue;
    const name = m[1];
    let i = name.length;
    const labels: Record<string, string> = {};
    if (line[i] === "{") {
      i++;
      // label="value" pairs; values escape backslash, double quote and newline.
      while (i < line.length && line[i] !== "}") {
        const lm = /^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"/.exec(line.slice(i));
        if (!lm?.[1]) break;
        i += lm[0].length;
        let v = "";
        while (i < line.length && line[i] !== '"') {
          if (line[i] === "\\" && i + 1 < line.length) {
            const n = line[i + 1];
            v += n === "n" ? "\n" : n;
            i += 2;
          } else v += line[i++];
        }
        labels[lm[1]] = v;
        i++; // closing quote
        while (line[i] === "," || line[i] === " ") i++;
      }
      if (line[i] !== "}") continue;
      i++;
    }
    const value = promNumber(line.slice(i).trim().split(/\s+/)[0] ?? "");
    if (!Number.isNaN(value)) out.push({ name, labels, value });
  }
  return out;
}

function promNumber(s: string): number {
  if (s === "+Inf" || s === "Inf") return Number.POSITIVE_INFINITY;
  if (s === "-Inf") return Number.NEGATIVE_INFINITY;
  return s === "" ? Number.NaN : Number(s);
}

/** Routes of the app's own plumbing (probes, this scrape), left out of the shop's request figures. */
const INTERNAL_ROUTES = new Set(["/metrics", "/healthz", "/readyz"]);

/** One app pod's counters (totals since its process started) and the database size it reports. */
export interface PodCounters {
  requests: number;
  /** Requests answered 5xx. */
  errors: number;
  durationSeconds: number;
  durationCount: number;
  cacheHits: number;
  /** Product reads by any cache result (hit, miss, bypass). */
  cacheReads: number;
  /** Bytes over the pod's network interfaces; undefined when the app does not report them. */
  receiveBytes?: number;
  transmitBytes?: number;
  databaseBytes?: number;
}

const zeroCounters = (): PodCounters => ({
  requests: 0,
  errors: 0,
  durationSeconds: 0,
  durationCount: 0,
  cacheHits: 0,
  cacheReads: 0,
});

/** The counters the dashboard shows, from one pod's /metrics text. */
export function podCounters(text: string): PodCounters {
  const c = zeroCounters();
  for (const s of parsePromText(text)) {
    const shop = !INTERNAL_ROUTES.has(s.labels.route ?? "");
    switch (s.name) {
      case "http_requests_total":
        if (!shop) break;
        c.requests += s.value;
        if (s.labels.status?.startsWith("5")) c.errors += s.value;
        break;
      case "http_request_duration_seconds_sum":
        if (shop) c.durationSeconds += s.value;
        break;
      case "http_request_duration_seconds_count":
        if (shop) c.durationCount += s.value;
        break;
      case "commerce_product_cache_requests_total":
        c.cacheReads += s.value;
        if (s.labels.result === "hit") c.cacheHits += s.value;
        break;
      case "commerce_pod_network_receive_bytes_total":
        c.receiveBytes = (c.receiveBytes ?? 0) + s.value;
        break;
      case "commerce_pod_network_transmit_bytes_total":
        c.transmitBytes = (c.transmitBytes ?? 0) + s.value;
        break;
      case "commerce_database_size_bytes":
        c.databaseBytes = s.value;
        break;
    }
  }
  return c;
}

/** The app pods' counters read at one moment (pod name → counters). */
export interface MetricsSample {
  at: number;
  pods: Map<string, PodCounters>;
}

/** What the page shows: rates over an interval, or totals since the pods started. */
export interface PlatformPerformance {
  /** Seconds between the two samples; undefined for totals since the pods started. */
  intervalSeconds?: number;
  /** Pods the figures cover (for rates: those in both samples). */
  pods: number;
  /** Requests (rates: per second; totals: count). */
  requests: number;
  /** 5xx share of the requests, 0–1; undefined without requests. */
  errorRate?: number;
  averageResponseMs?: number;
  /** Cache hits among product reads, 0–1; undefined without reads. */
  cacheHitRate?: number;
  /** Network bytes (rates: per second; totals: bytes); undefined when not reported. */
  receiveBytes?: number;
  transmitBytes?: number;
  /** The database size the app reports (the same database for every pod). */
  databaseBytes?: number;
}

const ratio = (a: number, b: number) => (b > 0 ? a / b : undefined);

function add(sum: PodCounters, d: PodCounters): void {
  for (const k of [
    "requests",
    "errors",
    "durationSeconds",
    "durationCount",
    "cacheHits",
    "cacheReads",
  ] as const)
    sum[k] += d[k];
  for (const k of ["receiveBytes", "transmitBytes"] as const)
    if (d[k] !== undefined) sum[k] = (sum[k] ?? 0) + d[k];
}

/** A counter's increase; a smaller value means the process restarted and counts from zero again. */
const increase = (prev: number, cur: number) => (cur >= prev ? cur - prev : cur);

/**
 * Figures of `cur`: rates against `prev` over the pods in both samples, or without `prev` the
 * totals since the pods started.
 */
export function performance(cur: MetricsSample, prev?: MetricsSample): PlatformPerformance {
  const sum = zeroCounters();
  let pods = 0;
  let databaseBytes: number | undefined;
  for (const [pod, c] of cur.pods) {
    databaseBytes ??= c.databaseBytes;
    const p = prev?.pods.get(pod);
    if (prev && !p) continue;
    pods++;
    if (!p) {
      add(sum, c);
      continue;
    }
    const d: PodCounters = {
      requests: increase(p.requests, c.requests),
      errors: increase(p.errors, c.errors),
      durationSeconds: increase(p.durationSeconds, c.durationSeconds),
      durationCount: increase(p.durationCount, c.durationCount),
      cacheHits: increase(p.cacheHits, c.cacheHits),
      cacheReads: increase(p.cacheReads, c.cacheReads),
    };
    if (c.receiveBytes !== undefined) d.receiveBytes = increase(p.receiveBytes ?? 0, c.receiveBytes);
    if (c.transmitBytes !== undefined) d.transmitBytes = increase(p.transmitBytes ?? 0, c.transmitBytes);
    add(sum, d);
  }
  const seconds = prev ? (cur.at - prev.at) / 1000 : undefined;
  const per = (n: number | undefined) => (n === undefined || !seconds ? n : n / seconds);
  const avg = ratio(sum.durationSeconds, sum.durationCount);
  return {
    intervalSeconds: seconds,
    pods,
    requests: per(sum.requests) ?? 0,
    errorRate: ratio(sum.errors, sum.requests),
    averageResponseMs: avg === undefined ? undefined : avg * 1000,
    cacheHitRate: ratio(sum.cacheHits, sum.cacheReads),
    receiveBytes: per(sum.receiveBytes),
    transmitBytes: per(sum.transmitBytes),
    databaseBytes,
  };
}

/**
 * The last samples of each platform, shared by every viewer's page (each sample was read with
 * some viewer's rights, and a rate shown to a viewer needs that viewer's own current read too).
 * Bounded: entries older than `ttlMs` are not used and the oldest go beyond `max`. Two samples
 * closer than `minIntervalMs` (two viewers, or a page and its live stream) would give noisy
 * rates, so such a sample is compared with the one before.
 */
export class MetricsHistory {
  private readonly entries = new Map<string, { base?: MetricsSample; last: MetricsSample }>();
  private readonly opts: { ttlMs: number; max: number; minIntervalMs: number };
  constructor(opts: Partial<MetricsHistory["opts"]> = {}) {
    this.opts = { ttlMs: 10 * 60_000, max: 1000, minIntervalMs: 2000, ...opts };
  }

  /** Records `sample` of platform `key` and returns its figures (rates when a usable earlier sample exists). */
  observe(key: string, sample: MetricsSample): PlatformPerformance {
    const e = this.entries.get(key);
    this.entries.delete(key);
    const fresh = (s?: MetricsSample) => (s && sample.at - s.at < this.opts.ttlMs ? s : undefined);
    let prev: MetricsSample | undefined;
    let base: MetricsSample | undefined;
    if (e && sample.at - e.last.at >= this.opts.minIntervalMs) {
      prev = fresh(e.last);
      base = prev;
    } else if (e) {
      prev = fresh(e.base);
      base = prev;
    }
    this.entries.set(key, { base, last: sample });
    while (this.entries.size > this.opts.max) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    return performance(sample, prev);
  }

  get size(): number {
    return this.entries.size;
  }
}
