import { createHash } from "node:crypto";

// The store's one stylesheet, served from memory under a content-hashed path (cached for a year,
// a new deploy changes the path). System fonts, no images: nothing else to load. Colours keep at
// least 4.5:1 contrast; focus is always visible; one column below 700 px.

export const CSS = `
:root{--ink:#1b1f24;--muted:#555d66;--line:#d5d9de;--bg:#f6f7f9;--card:#fff;--accent:#0b5cad;--accent-ink:#fff;--ok:#17683a;--bad:#a1261b;--radius:10px;
font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg);line-height:1.5}
*{box-sizing:border-box}body{margin:0;min-height:100vh;display:flex;flex-direction:column}
a{color:var(--accent)}a:hover{text-decoration-thickness:2px}
:focus-visible{outline:3px solid #f0a500;outline-offset:2px}
.wrap{width:100%;max-width:1120px;margin:0 auto;padding:0 1rem}
main.wrap{flex:1;padding-top:1.5rem;padding-bottom:2rem}main:focus{outline:none}
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5rem 1rem;z-index:10}.skip:focus{left:1rem}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.top{background:var(--card);border-bottom:1px solid var(--line)}
.bar{display:flex;flex-wrap:wrap;align-items:center;gap:.75rem 1.25rem;padding-top:.75rem;padding-bottom:.75rem}
.brand{font-weight:700;font-size:1.25rem;color:var(--ink);text-decoration:none}
.search{display:flex;flex:1;min-width:220px;gap:.5rem}.search input{flex:1;min-width:0}
nav[aria-label=Store]{display:flex;gap:1rem;align-items:center}
nav[aria-label=Store] a{text-decoration:none;font-weight:500}
.count{display:inline-block;min-width:1.6em;padding:0 .4em;border-radius:1em;background:var(--accent);color:var(--accent-ink);text-align:center;font-size:.85em}
h1{font-size:1.75rem;line-height:1.2;margin:.25rem 0 1rem}h2{font-size:1.25rem;margin:1.5rem 0 .75rem}
input,select,button{font:inherit;color:inherit}
input,select{padding:.5rem .6rem;border:1px solid #8a939c;border-radius:6px;background:#fff;max-width:100%}
button,.button{display:inline-block;padding:.55rem 1.1rem;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:var(--accent-ink);font-weight:600;cursor:pointer;text-decoration:none}
button:disabled{background:#6b737b;border-color:#6b737b;cursor:not-allowed}
button.secondary{background:#fff;color:var(--accent)}
button.link{background:none;border:none;color:var(--accent);text-decoration:underline;padding:.55rem .3rem;font-weight:500}
.panel{background:var(--card);border:1px solid var(--line);border-radius:var(--radius);padding:1.25rem;margin-bottom:1.5rem}
.panel>:first-child{margin-top:0}.panel>:last-child{margin-bottom:0}
.narrow{max-width:460px;margin-left:auto;margin-right:auto}
.hero{background:linear-gradient(135deg,#0b5cad,#163f6b);color:#fff;border-radius:var(--radius);padding:2rem 1.5rem;margin-bottom:1.5rem}
.hero h1{font-size:2.2rem;margin:0 0 .5rem}.hero .button{background:#fff;color:#0b3f78;border-color:#fff}
.grid{list-style:none;padding:0;margin:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:1rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:var(--radius);padding:1rem;display:flex;flex-direction:column;gap:.25rem}
.card a{text-decoration:none;color:var(--ink);display:flex;flex-direction:column;gap:.5rem}.card a:hover .title{text-decoration:underline}
.card .title{font-weight:600}
.grid+section,section+section{margin-top:1.5rem}
@media (max-width:500px){.grid{grid-template-columns:repeat(2,minmax(0,1fr));gap:.75rem}.card{padding:.75rem}}
.thumb{display:flex;align-items:center;justify-content:center;aspect-ratio:4/3;border-radius:8px;background:#e3ebf5;color:#0b3f78;font-size:2rem;font-weight:700}
.thumb.big{font-size:4rem;aspect-ratio:1}
.price{font-weight:600}.stock{color:var(--ok);font-size:.9rem}.stock.out{color:var(--bad)}
.muted{color:var(--muted);font-size:.9rem}.warn{display:block;color:var(--bad);font-size:.9rem}
.alert{border:1px solid var(--bad);background:#fdecea;color:#7a1c13;padding:.75rem 1rem;border-radius:6px}
.badge{font-size:.8rem;background:#fff4d6;color:#6b4b00;border:1px solid #e2c36b;border-radius:4px;padding:0 .4rem}
.pager{display:flex;justify-content:space-between;align-items:center;margin-top:1.5rem}
.crumbs{font-size:.9rem;margin-bottom:.75rem}
.product{display:grid;grid-template-columns:minmax(0,2fr) minmax(0,3fr);gap:2rem}
.stack{display:flex;flex-direction:column;gap:.5rem;align-items:flex-start}
.stack>input,.stack>select{width:100%;max-width:420px}.stack>input[type=number]{max-width:8rem}.stack>button{margin-top:.5rem}
fieldset{border:1px solid var(--line);border-radius:8px;padding:.75rem 1rem;margin:0 0 .75rem;width:100%;background:var(--card)}
fieldset input:not([type=radio]),fieldset select{width:100%;max-width:420px;margin-bottom:.5rem}
fieldset label{display:block}
legend{font-weight:600;padding:0 .3rem}
address{font-style:normal}
.variant{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem;padding:.5rem 0;border-bottom:1px solid var(--line)}
.variant:last-child{border-bottom:none}fieldset>button.secondary{margin-top:.5rem}.variant .vt{flex:1;min-width:8rem}
table.lines{width:100%;border-collapse:collapse;background:var(--card);border:1px solid var(--line);border-radius:var(--radius)}
.lines th,.lines td{text-align:left;padding:.6rem .75rem;border-bottom:1px solid var(--line);vertical-align:top}
.lines thead th{font-size:.85rem;color:var(--muted)}.lines tbody th{font-weight:500}
.lines tbody th .muted{display:block}
.qty{display:flex;flex-wrap:wrap;gap:.25rem;align-items:center}.qty input{width:5rem}
.totals{display:grid;grid-template-columns:1fr auto;gap:.25rem 1rem;max-width:360px;margin:1rem 0 1rem auto}
.totals dd{margin:0;text-align:right}.totals .total{font-weight:700;font-size:1.1rem;border-top:1px solid var(--line);padding-top:.25rem}
.summary{list-style:none;padding:0;margin:0}.summary li{display:flex;justify-content:space-between;gap:1rem;padding:.25rem 0}
.checkout{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:1.5rem;align-items:start}
.checkout .totals{margin-left:0}
.actions{display:flex;gap:1rem;align-items:center;justify-content:flex-end}
.mono{font-family:ui-monospace,monospace;font-size:.95em;word-break:break-all}
.foot{background:#1f2a36;color:#e8edf2;padding:1.25rem 0;margin-top:auto}
.foot a{color:#9fd0ff}.contact{font-style:normal;display:flex;flex-wrap:wrap;gap:.25rem 1.5rem}
@media (max-width:700px){
 .product,.checkout{grid-template-columns:1fr}.thumb.big{max-width:220px}
 .hero h1{font-size:1.7rem}
 .lines thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
 .lines tr{display:block;border-bottom:1px solid var(--line);padding:.5rem 0}
 .lines th,.lines td{display:block;border:none;padding:.25rem .75rem}
 .lines td[data-label]::before{content:attr(data-label) ": ";color:var(--muted);font-size:.85rem}
 .totals{margin-left:0;max-width:none}
}
`;

export const CSS_PATH = `/assets/store-${createHash("sha256").update(CSS).digest("hex").slice(0, 12)}.css`;
