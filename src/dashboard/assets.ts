import { createHash } from "node:crypto";

// The dashboard's only stylesheet and script, served from this process (the CSP allows 'self'
// only). Kept as strings in a module so the compiled image carries them without a copy step.
// The script is small and hand-written on purpose: it only progressively enhances forms that
// already work without it (search as you type, the run preview, local times), so a vendored
// framework would add more than it saves.

const CSS = `
:root{--bg:#f6f7f9;--fg:#1b1f24;--muted:#57606a;--card:#fff;--line:#d0d7de;--accent:#0b5cad;--accent-fg:#fff;
--ok:#116329;--ok-bg:#dafbe1;--bad:#a40e26;--bad-bg:#ffebe9;--warn:#7d4e00;--warn-bg:#fff8c5;--idle:#424a53;--idle-bg:#eaeef2;
--focus:#0969da;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--card:#161b22;--line:#3d444d;
--accent:#4493f8;--accent-fg:#0d1117;--ok:#3fb950;--ok-bg:#12261e;--bad:#ff7b72;--bad-bg:#2d1214;--warn:#d29922;
--warn-bg:#2b2111;--idle:#9198a1;--idle-bg:#21262d;--focus:#4493f8}}
*{box-sizing:border-box}[hidden]{display:none!important}body{margin:0;background:var(--bg);color:var(--fg);line-height:1.5}
a{color:var(--accent)}:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:var(--card);padding:.5rem;z-index:9}
.top{display:flex;flex-wrap:wrap;gap:1rem;align-items:center;padding:.75rem 1.25rem;border-bottom:1px solid var(--line);background:var(--card)}
.brand{font-weight:700;text-decoration:none;color:var(--fg);font-size:1.1rem}
.top nav a{margin-right:1rem}.top nav a[aria-current=page]{font-weight:600}
.top nav a{white-space:nowrap}button.link{white-space:nowrap}.steps{list-style:none;padding:0}.steps li{margin:.4rem 0}
.plan-choice{display:flex;align-items:center;gap:.25rem;margin:0}.user{margin-left:auto;display:flex;gap:.75rem;align-items:center}.who{color:var(--muted);overflow-wrap:anywhere}
main{max-width:72rem;margin:0 auto;padding:1.25rem;overflow-wrap:break-word}main:focus{outline:none}
h1{font-size:1.5rem;margin:.25rem 0 1rem}h2{font-size:1.15rem;margin:.25rem 0}
.bar{display:flex;flex-wrap:wrap;gap:.75rem;align-items:end;margin-bottom:1rem}
.bar .grow{flex:1 1 16rem}
label{display:block;font-weight:600;margin-bottom:.25rem}
input,select,textarea,button,.button{font:inherit;font-size:1rem;border-radius:6px;padding:.5rem .7rem;border:1px solid var(--line);background:var(--card);color:var(--fg);min-height:2.5rem}
input,select,textarea{width:100%}textarea{font-family:ui-monospace,monospace;min-height:12rem}
button,.button{cursor:pointer;background:var(--accent);color:var(--accent-fg);border-color:var(--accent);text-decoration:none;display:inline-block;font-weight:600}
button.secondary,.button.secondary{background:var(--card);color:var(--fg);border-color:var(--line)}
button.danger{background:var(--bad);border-color:var(--bad);color:#fff}
button.link{background:none;border:none;color:var(--accent);padding:0;min-height:0;font-weight:400;text-decoration:underline}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(18rem,1fr));gap:1rem;padding:0;margin:0;list-style:none}
.card,.panel{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1rem}
.panel{margin-bottom:1rem}
.card h2 a{text-decoration:none}.card h2 a:hover{text-decoration:underline}
.card header{display:flex;justify-content:space-between;gap:.5rem;align-items:start}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem .75rem;margin:.5rem 0 0}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;overflow-wrap:break-word;min-width:0}
.badge{display:inline-block;border-radius:999px;padding:.1rem .6rem;font-size:.85rem;font-weight:600;white-space:nowrap}
.badge.Running,.badge.Succeeded{background:var(--ok-bg);color:var(--ok)}
.badge.Failed,.badge.TimedOut{background:var(--bad-bg);color:var(--bad)}
.badge.Pending{background:var(--warn-bg);color:var(--warn)}.badge.Stopped,.badge.Unknown{background:var(--idle-bg);color:var(--idle)}
.muted{color:var(--muted)}code,pre{font-family:ui-monospace,monospace}
pre{background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:.75rem;overflow:auto;max-height:28rem;white-space:pre-wrap}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin:0 0 1rem}.actions form{margin:0}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
.table-wrap{overflow-x:auto}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,19rem),1fr));gap:1rem}
.field{margin-bottom:1rem}.hint{color:var(--muted);font-size:.9rem;margin:.25rem 0 0}
.field-error{color:var(--bad);font-weight:600;margin:.25rem 0 0}
[aria-invalid=true]{border-color:var(--bad);border-width:2px}
.error h1 .code{color:var(--muted);font-weight:400}.notice{border-left:4px solid var(--accent)}
.error{border-left:4px solid var(--bad)}
fieldset{min-width:0;border:1px solid var(--line);border-radius:8px;margin:0 0 1rem;padding:1rem}legend{font-weight:700;padding:0 .25rem}
input[type=checkbox],input[type=radio]{width:1.25rem;height:1.25rem;min-height:0;margin:0 .5rem 0 0;vertical-align:middle}form.inline{display:inline}
.env-row{display:grid;grid-template-columns:1fr 2fr;gap:.5rem;margin-bottom:.5rem}
.secret{font-family:ui-monospace,monospace}
textarea.short{min-height:5rem}details.edit{margin:.25rem 0 1rem}details.edit summary{cursor:pointer;color:var(--accent);font-weight:600;padding:.4rem 0}
details.edit[open] summary{margin-bottom:.5rem}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
@media (max-width:40rem){main{padding:.75rem}.top{padding:.5rem .75rem}input[type=checkbox],input[type=radio]{width:1.25rem;height:1.25rem;min-height:0;margin:0 .5rem 0 0;vertical-align:middle}form.inline{display:inline}
.env-row{grid-template-columns:1fr}
dl.facts{grid-template-columns:1fr}dl.facts dd{margin-bottom:.35rem}
table.stack thead{position:absolute;left:-999px}table.stack tr{display:block;border-bottom:1px solid var(--line);padding:.5rem 0}
table.stack td,table.stack th{display:block;border:0;padding:.1rem 0}
table.stack td[data-label]::before{content:attr(data-label) ": ";color:var(--muted)}}
`;

const JS = `
(function(){
"use strict";
function debounce(f,ms){var t;return function(){clearTimeout(t);t=setTimeout(f,ms)}}
function live(input){
  var form=input.form,target=document.getElementById(input.getAttribute("data-target")),seq=0;
  if(!form||!target)return;
  var run=debounce(function(){
    var url=new URL(input.getAttribute("data-partial"),location.href);
    var only=(input.getAttribute("data-fields")||"").split(",").filter(Boolean);
    new FormData(form).forEach(function(v,k){if(typeof v==="string"&&k!=="_csrf"&&(only.length===0||only.indexOf(k)>=0))url.searchParams.set(k,v)});
    var mine=++seq;
    fetch(url,{headers:{"X-Partial":"1"},credentials:"same-origin"}).then(function(r){return r.ok?r.text():null})
      .then(function(html){if(html===null||mine!==seq)return;target.innerHTML=html;localTimes(target);
        if(input.hasAttribute("data-push")){var page=new URL(location.href);url.searchParams.forEach(function(v,k){page.searchParams.set(k,v)});history.replaceState(null,"",page)}})
      .catch(function(){});
  },150);
  form.addEventListener("input",function(e){if(e.target===input||input.getAttribute("data-watch")&&e.target.matches(input.getAttribute("data-watch")))run()});
  form.addEventListener("change",function(e){if(e.target.tagName==="SELECT"&&e.target.matches(input.getAttribute("data-watch")||"select"))run()});
}
function localTimes(root){
  root.querySelectorAll("time[data-local]").forEach(function(t){
    var d=new Date(t.getAttribute("datetime"));if(isNaN(d))return;
    var s=t.nextElementSibling;if(!s||!s.classList.contains("local-time")){s=document.createElement("span");s.className="local-time muted";t.after(s)}
    s.textContent=" (your time: "+d.toLocaleString()+")";
  });
}
document.addEventListener("DOMContentLoaded",function(){
  document.querySelectorAll("[data-partial]").forEach(live);
  document.querySelectorAll("[data-js-hide]").forEach(function(e){e.hidden=true});
  document.querySelectorAll("[data-sse-log]").forEach(function(el){
    if(!window.EventSource)return;
    var es=new EventSource(el.getAttribute("data-sse-log"));
    es.addEventListener("log",function(e){el.textContent+=e.data});
    es.addEventListener("end",function(){es.close();el.setAttribute("data-done","");el.textContent+="\\n(run finished; reload for its record)"});
  });
  document.querySelectorAll("[data-sse]").forEach(function(el){
    if(!window.EventSource)return;
    var es=new EventSource(el.getAttribute("data-sse"));
    es.addEventListener(el.getAttribute("data-sse-event")||"steps",function(e){el.innerHTML=e.data;localTimes(el)});
  });
  localTimes(document);
});
})();
`;

const hash = (s: string) => createHash("sha256").update(s).digest("hex").slice(0, 12);

/** Content-addressed paths, so the assets can be cached for a year. */
export const ASSET_PATHS = {
  css: `/dashboard/assets/app-${hash(CSS)}.css`,
  js: `/dashboard/assets/app-${hash(JS)}.js`,
} as const;

/** Body and content type of each asset path. */
export const ASSETS: Record<string, { body: string; type: string }> = {
  [ASSET_PATHS.css]: { body: CSS, type: "text/css; charset=utf-8" },
  [ASSET_PATHS.js]: { body: JS, type: "text/javascript; charset=utf-8" },
};
