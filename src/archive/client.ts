import { get as httpGet } from "node:http";
import { get as httpsGet } from "node:https";

// A client's GET of the history endpoint (http.ts), as the CLI and the dashboard read it: the
// caller's bearer token, the endpoint's CA trusted for HTTPS. node:https rather than fetch: fetch
// takes no CA per request without an extra HTTP client dependency.

/** An answer of the endpoint: status and body text. */
export interface ArchiveAnswer {
  status: number;
  statusText: string;
  text: string;
}

/** GET `url` with the bearer token, trusting `ca` for HTTPS when given; 30 s at most. */
export function getArchive(
  url: string,
  token: string | undefined,
  ca: Buffer | undefined,
): Promise<ArchiveAnswer> {
  const u = new URL(url);
  const get = u.protocol === "https:" ? httpsGet : httpGet;
  return new Promise((resolve, reject) => {
    const req = get(
      u,
      { headers: token ? { authorization: `Bearer ${token}` } : {}, ...(ca ? { ca } : {}), timeout: 30_000 },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          text += c;
        });
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? "", text }),
        );
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error("timed out after 30 s")));
    req.on("error", reject);
  });
}
