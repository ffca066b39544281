import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** Metric families, named as controller-runtime and client-go name them so dashboards carry over. */
export class RuntimeMetrics {
  readonly registry: Registry;
  readonly reconcileTotal: Counter<"controller" | "result">;
  readonly reconcileErrors: Counter<"controller">;
  readonly terminalErrors: Counter<"controller">;
  readonly reconcileTime: Histogram<"controller">;
  readonly activeWorkers: Gauge<"controller">;
  readonly maxConcurrent: Gauge<"controller">;
  readonly queueDepth: Gauge<"controller" | "name">;
  readonly queueAdds: Counter<"controller" | "name">;
  readonly queueRetries: Counter<"controller" | "name">;
  readonly informerLastEvent: Gauge<"resource">;
  readonly informerSynced: Gauge<"resource">;
  readonly leaderStatus: Gauge<"name">;

  constructor(opts: { registry?: Registry; processMetrics?: boolean } = {}) {
    this.registry = opts.registry ?? new Registry();
    const registers = [this.registry];
    if (opts.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.reconcileTotal = new Counter({
      name: "controller_runtime_reconcile_total",
      help: "Total number of reconciliations per controller and result",
      labelNames: ["controller", "result"],
      registers,
    });
    this.reconcileErrors = new Counter({
      name: "controller_runtime_reconcile_errors_total",
      help: "Total number of reconciliation errors per controller",
      labelNames: ["controller"],
      registers,
    });
    this.terminalErrors = new Counter({
      name: "controller_runtime_terminal_reconcile_errors_total",
      help: "Total number of terminal reconciliation errors per controller",
      labelNames: ["controller"],
      registers,
    });
    this.reconcileTime = new Histogram({
      name: "controller_runtime_reconcile_time_seconds",
      help: "Length of time per reconciliation per controller",
      labelNames: ["controller"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.activeWorkers = new Gauge({
      name: "controller_runtime_active_workers",
      help: "Number of currently used workers per controller",
      labelNames: ["controller"],
      registers,
    });
    this.maxConcurrent = new Gauge({
      name: "controller_runtime_max_concurrent_reconciles",
      help: "Maximum number of concurrent reconciles per controller",
      labelNames: ["controller"],
      registers,
    });
    this.queueDepth = new Gauge({
      name: "workqueue_depth",
      help: "Current depth of workqueue",
      labelNames: ["controller", "name"],
      registers,
    });
    this.queueAdds = new Counter({
      name: "workqueue_adds_total",
      help: "Total number of adds handled by workqueue",
      labelNames: ["controller", "name"],
      registers,
    });
    this.queueRetries = new Counter({
      name: "workqueue_retries_total",
      help: "Total number of retries handled by workqueue",
      labelNames: ["controller", "name"],
      registers,
    });
    this.informerLastEvent = new Gauge({
      name: "cronscale_informer_last_event_timestamp_seconds",
      help: "Unix time of the last add/update/delete an informer delivered",
      labelNames: ["resource"],
      registers,
    });
    this.informerSynced = new Gauge({
      name: "cronscale_informer_synced",
      help: "1 when the informer has completed its initial list",
      labelNames: ["resource"],
      registers,
    });
    this.leaderStatus = new Gauge({
      name: "leader_election_master_status",
      help: "1 when this process holds the leader lease",
      labelNames: ["name"],
      registers,
    });
  }
}
