import { createHash } from "node:crypto";

// The admin's only stylesheet, served from this process (the CSP allows styles from 'self' only
// and no script at all). Kept as a string so the image carries it without a copy step.

const CSS = `
:root{--bg:#f6f7f9;--fg:#1b1f24;--muted:#57606a;--card:#fff;--line:#d0d7de;--accent:#0b5cad;--accent-fg:#fff;
--ok:#116329;--ok-bg:#dafbe1;--bad:#a40e26;--bad-bg:#ffebe9;--warn:#7d4e00;--warn-bg:#fff8c5;--focus:#0969da;
font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color-scheme:light}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);line-height:1.5}
a{color:var(--accent)}:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:var(--card);padding:.5rem;z-index:9}
.top{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;padding:.75rem 1.25rem;border-bottom:1px solid var(--line);background:var(--card)}
.brand{font-weight:700;text-decoration:none;color:var(--fg);font-size:1.1rem}
.top nav{display:flex;flex-wrap:wrap;gap:.25rem 1rem}.top nav a{white-space:nowrap}.top nav a[aria-current=page]{font-weight:700}
.user{margin-left:auto;display:flex;gap:.75rem;align-items:center;margin-block:0}.who{color:var(--muted)}
main{max-width:72rem;margin:0 auto;padding:1.25rem}main:focus{outline:none}
main.narrow{max-width:32rem}
h1{font-size:1.5rem;margin:.25rem 0 1rem}h2{font-size:1.15rem;margin:.25rem 0 .5rem}
.bar{display:flex;flex-wrap:wrap;gap:.75rem;align-items:end;margin-bottom:1rem}.bar .grow{flex:1 1 14rem}.bar .field{margin:0}
label{display:block;font-weight:600;margin-bottom:.25rem}
input,select,textarea,button,.button{font:inherit;font-size:1rem;border-radius:6px;padding:.5rem .7rem;border:1px solid var(--line);background:var(--card);color:var(--fg);min-height:2.5rem}
input,select,textarea{width:100%}
button,.button{cursor:pointer;background:var(--accent);color:var(--accent-fg);border-color:var(--accent);text-decoration:none;display:inline-block;font-weight:600}
button.secondary,.button.secondary{background:var(--card);color:var(--fg);border-color:var(--line)}
button.danger{background:var(--bad);border-color:var(--bad);color:#fff}
button.link{background:none;border:none;color:var(--accent);padding:0;min-height:0;font-weight:400;text-decoration:underline}
.panel{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1rem;margin-bottom:1rem;min-width:0}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,19rem),1fr));gap:1rem;margin-bottom:1rem}.grid>.panel{margin:0}
.kpis{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,10rem),1fr));gap:1rem;margin-bottom:1rem}
.kpi{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.75rem 1rem}.kpi b{display:block;font-size:1.4rem}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem .75rem;margin:0}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;overflow-wrap:anywhere;min-width:0}
.badge{display:inline-block;border-radius:999px;padding:.1rem .6rem;font-size:.85rem;font-weight:600;white-space:nowrap;background:#eaeef2;color:#24292f}
.badge.paid,.badge.fulfilled,.badge.shipped,.badge.delivered,.badge.succeeded,.badge.active{background:var(--ok-bg);color:var(--ok)}
.badge.cancelled,.badge.refunded,.badge.failed,.badge.revoked{background:var(--bad-bg);color:var(--bad)}
.badge.pending,.badge.draft{background:var(--warn-bg);color:var(--warn)}
.muted{color:var(--muted)}code{font-family:ui-monospace,monospace;overflow-wrap:anywhere}
.secret{font-family:ui-monospace,monospace;font-size:1.05rem;background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:.5rem;overflow-wrap:anywhere}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end;margin:0 0 1rem}.actions form{margin:0}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.table-wrap{overflow-x:auto}
.field{margin-bottom:1rem}.hint{color:var(--muted);font-size:.9rem;margin:.25rem 0 0}
.error{border-left:4px solid var(--bad)}.notice{border-left:4px solid var(--accent)}.ok{border-left:4px solid var(--ok)}
fieldset{min-width:0;border:1px solid var(--line);border-radius:8px;margin:0 0 1rem;padding:1rem}legend{font-weight:700;padding:0 .25rem}
.checks{display:grid;grid-template-columns:repeat(auto-fill,minmax(11rem,1fr));gap:.25rem}.checks label{font-weight:400;display:flex;align-items:center}
input[type=checkbox],input[type=radio]{width:1.25rem;height:1.25rem;min-height:0;margin:0 .5rem 0 0;flex:none}
.choices label{display:flex;align-items:center;font-weight:400;margin:.25rem 0}
.chart svg{width:100%;height:auto;min-height:9rem;display:block}.chart .bar-rect{fill:var(--accent)}.chart .axis{stroke:var(--line)}
.chart .orders-line{fill:none;stroke:#bc4c00;stroke-width:2}.chart .orders-dot{fill:#bc4c00}
.axis-labels,.legend{display:flex;justify-content:space-between;flex-wrap:wrap;gap:.5rem;color:var(--muted);font-size:.9rem}
.legend{justify-content:flex-start;gap:1rem}.swatch{display:inline-block;width:.9rem;height:.9rem;margin-right:.3rem;vertical-align:-.1rem;background:var(--accent)}.swatch.orders{background:#bc4c00}
.qr{width:14rem;max-width:100%;height:auto;background:#fff;padding:.5rem;border:1px solid var(--line)}
ol.codes{columns:2;font-family:ui-monospace,monospace}
details summary{cursor:pointer;font-weight:600}
ul.plain{list-style:none;padding:0;margin:0}ul.plain>li+li{border-top:1px solid var(--line);margin-top:.5rem;padding-top:.5rem}
.panel>.hint{margin:0 0 .75rem}
.pager{display:flex;gap:1rem;margin-top:1rem}
@media (max-width:40rem){main{padding:.75rem}.top{padding:.5rem .75rem}.user{margin-left:0}
dl.facts{grid-template-columns:1fr}dl.facts dd{margin-bottom:.35rem}
table.stack thead{position:absolute;left:-9999px}table.stack tr{display:block;border-bottom:1px solid var(--line);padding:.5rem 0}
table.stack td{display:block;border:0;padding:.1rem 0;text-align:left}
table.stack td[data-label]::before{content:attr(data-label) ": ";color:var(--muted)}}
`;

const hash = (s: string) => createHash("sha256").update(s).digest("hex").slice(0, 12);

/** The stylesheet and its content-addressed path (cached for a year). */
export const STYLESHEET = { body: CSS, path: `/admin/assets/admin.${hash(CSS)}.css` };
