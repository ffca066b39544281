import { API_VERSION } from "../api/v1alpha1/kind.ts";
import { type CliIO, type Command, connect, KUBE_OPTIONS } from "./common.ts";

// Shell completion. The scripts are thin: they hand the words typed so far to the hidden command
// `cronscale __complete`, which answers one candidate a line: command names, a command's flags
// (read from its --help, so they never drift), and for a task's or a platform's argument the
// names of those in the namespace, read from the cluster as the kubeconfig's user (nothing when
// the cluster does not answer within 3 s). kubectl's own completion of `kubectl cronscale …`
// calls the bin kubectl_complete-cronscale, which is `cronscale __complete --kubectl`.

const BASH = `# bash completion of cronscale and kubectl-cronscale: source <(cronscale completion bash)
_cronscale() {
  local IFS=$'\\n'
  COMPREPLY=($(compgen -W "$("\${COMP_WORDS[0]}" __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)" -- "\${COMP_WORDS[COMP_CWORD]}"))
}
complete -o default -F _cronscale cronscale kubectl-cronscale`;

const ZSH = `#compdef cronscale kubectl-cronscale
# zsh completion of cronscale: source <(cronscale completion zsh)
_cronscale() {
  local -a candidates
  candidates=("\${(@f)$("\${words[1]}" __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  compadd -a candidates
}
if (( $+functions[compdef] )); then compdef _cronscale cronscale kubectl-cronscale; fi`;

const USAGE = `usage: cronscale completion bash|zsh

Prints a completion script: commands, flags, and the names of tasks and platforms in the namespace.
  bash:  source <(cronscale completion bash)     (or save it under /etc/bash_completion.d/)
  zsh:   source <(cronscale completion zsh)
kubectl cronscale <TAB> completes through the bin kubectl_complete-cronscale (kubectl 1.26+).`;

export function completionCommand(argv: string[], io: CliIO): number {
  const shell = argv[0];
  if (argv.length === 1 && (shell === "bash" || shell === "zsh")) {
    io.out(shell === "bash" ? BASH : ZSH);
    return 0;
  }
  if (shell === "-h" || shell === "--help") {
    io.out(USAGE);
    return 0;
  }
  io.err(USAGE);
  return 2;
}

/** The long flags of a command, read from its --help. */
async function flagsOf(command: Command, env: NodeJS.ProcessEnv): Promise<string[]> {
  const lines: string[] = [];
  const sink: CliIO = { out: (l) => lines.push(l), err: () => undefined, now: () => new Date() };
  await command(["--help"], sink, env);
  return [...new Set(lines.join("\n").match(/--[a-z][a-z-]*/g) ?? [])];
}

const TYPES = {
  task: { apiVersion: API_VERSION, kind: "ScheduledTask", plural: "scheduledtasks", namespaced: true },
  platform: { apiVersion: API_VERSION, kind: "ScalePlatform", plural: "scaleplatforms", namespaced: true },
} as const;

/**
 * `cronscale __complete [--kubectl] <words…> <partial>`: the candidates for the last word. With
 * --kubectl, cobra's trailing directive line (":4", no file completion) that kubectl expects.
 */
export async function completeCommand(
  argv: string[],
  io: CliIO,
  env: NodeJS.ProcessEnv,
  commands: Record<string, { run: Command; arg?: "task" | "platform" }>,
): Promise<number> {
  const kubectl = argv[0] === "--kubectl";
  const words = kubectl ? argv.slice(1) : argv;
  const partial = words.at(-1) ?? "";
  const before = words.slice(0, -1);
  const out = (candidates: string[]) => {
    for (const c of candidates) if (c.startsWith(partial)) io.out(c);
    if (kubectl) io.out(":4");
    return 0;
  };
  const name = before[0];
  if (name === undefined) return out([...Object.keys(commands), "--version", "--help"]);
  const command = commands[name];
  if (!command) return out([]);
  if (name === "completion") return out(before.length === 1 ? ["bash", "zsh"] : []);
  if (partial.startsWith("-")) return out(await flagsOf(command.run, env));
  const previous = before.at(-1);
  if (previous === "-o" || previous === "--output") return out(["table", "json", "yaml"]);
  if (previous === "--type" && name === "backup") return out(["full", "incr"]);
  // The one positional argument: offered only while none is given yet.
  const valueFlags = new Set(["-n", "--namespace", "--context", "--kubeconfig", "-o", "--output"]);
  const given = before
    .slice(1)
    .filter((w, i, all) => !w.startsWith("-") && !valueFlags.has(all[i - 1] ?? ""));
  if (!command.arg || given.length > 0) return out([]);
  const flag = (long: string, short?: string) => {
    const i = before.findIndex((w) => w === `--${long}` || (short !== undefined && w === `-${short}`));
    return i >= 0 ? before[i + 1] : before.find((w) => w.startsWith(`--${long}=`))?.slice(long.length + 3);
  };
  try {
    const k = connect(
      {
        namespace: flag("namespace", KUBE_OPTIONS.namespace.short),
        context: flag("context"),
        kubeconfig: flag("kubeconfig"),
      },
      env,
    );
    const path = await k.transport.path(TYPES[command.arg], k.namespace);
    const list = await k.transport.request<{ items: { metadata: { name: string } }[] }>("GET", path, {
      timeoutMs: 3000,
      accept: "application/json",
    });
    return out(list.items.map((i) => i.metadata.name));
  } catch {
    return out([]);
  }
}
