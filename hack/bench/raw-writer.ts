// The raw writer as a program of its own, the floor (tasks.ts bundles this file and starts it
// through raw-writer-main.mjs): the kubeconfig's credentials, as the operator's, then rawWriteAll.
import { KubeConfig } from "@kubernetes/client-node";
import { RealKubeClient } from "../../src/runtime/client.ts";
import { KubeTransport } from "../../src/runtime/rest.ts";
import { rawWriteAll } from "./raw-write.ts";

export async function runRawWriter(namespace: string, workers: number): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  await rawWriteAll(new RealKubeClient(KubeTransport.create(kc)), namespace, workers);
}
