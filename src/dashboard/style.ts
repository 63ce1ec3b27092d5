// The dashboard's one stylesheet, served at /dashboard/assets/style.css (a module, so the bundle carries it and the
// tests' TypeScript loader reads it without a CSS loader). Light and dark follow prefers-color-scheme.
export const STYLE = `
:root{--bg:#f7f8fa;--panel:#fff;--text:#1a1d23;--muted:#5d6472;--line:#e3e6eb;--accent:#4f46e5;--accent-text:#fff;
--danger:#c0262d;--ok:#12805c;--warn:#a15c07;--code:#f1f3f6;--focus:#818cf8;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#0f1115;--panel:#171a21;--text:#e6e8ec;--muted:#9aa3b2;--line:#2a2f3a;
--accent:#818cf8;--accent-text:#0f1115;--danger:#f87171;--ok:#34d399;--warn:#fbbf24;--code:#20242d;--focus:#a5b4fc}}
*{box-sizing:border-box}
html{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--text)}
body{margin:0}
a{color:var(--accent)}
:focus-visible{outline:2px solid var(--focus);outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:var(--panel);padding:8px;z-index:9}
.shell{display:flex;min-height:100vh}
.side{width:220px;flex:none;background:var(--panel);border-right:1px solid var(--line)}
.side-in{position:sticky;top:0;height:100vh;padding:20px 12px;display:flex;flex-direction:column;gap:4px}
.brand{font-weight:700;font-size:17px;padding:4px 10px 16px;color:var(--text);text-decoration:none}
.brand span{color:var(--accent)}
.side nav a{display:block;padding:7px 10px;border-radius:6px;color:var(--muted);text-decoration:none;font-weight:500}
.side nav a:hover{background:var(--code);color:var(--text)}
.side nav a[aria-current=page]{background:var(--code);color:var(--text)}
.who{margin-top:auto;padding:10px;border-top:1px solid var(--line);font-size:13px;color:var(--muted);
overflow-wrap:anywhere}
.who form{margin-top:8px}
main{flex:1;min-width:0;padding:28px 36px;max-width:1100px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:16px;margin:28px 0 10px}
.lead{color:var(--muted);margin:0 0 20px}
.card{background:var(--panel);border:1px solid var(--line);border-radius:10px;padding:18px 20px;margin:0 0 18px}
.card>h2:first-child{margin-top:0}.card form:not(.row) .field{max-width:420px}.row .field{margin-bottom:0}
.table-wrap{background:var(--panel);border:1px solid var(--line);border-radius:10px;margin-bottom:18px}
.scroll-x{overflow-x:auto}time{white-space:nowrap}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{text-align:left;padding:10px 14px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:12px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);font-weight:600}
tr:last-child td{border-bottom:0}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
code{background:var(--code);padding:2px 6px;border-radius:4px;overflow-wrap:anywhere}
.badge{display:inline-block;padding:1px 8px;border-radius:99px;font-size:12px;font-weight:600;border:1px solid}
.badge.active{color:var(--ok)}.badge.grace{color:var(--warn)}.badge.expired,.badge.revoked{color:var(--muted)}
.badge.failed{color:var(--danger)}.badge.unread{color:var(--accent)}tr.unread td{font-weight:600}
ol.notes{list-style:none;padding:0;margin:0 0 12px}ol.notes p{margin:0 0 4px}p.note{white-space:pre-wrap;overflow-wrap:anywhere}.muted{color:var(--muted);font-size:13px}
fieldset{border:0;padding:0;margin:0 0 12px;min-width:0}
legend{font-size:13px;font-weight:600;padding:0;margin-bottom:4px}
label.check{font-weight:400;font-size:14px;display:flex;gap:8px;align-items:center}
.checks{display:flex;flex-wrap:wrap;gap:4px 18px;margin:4px 0 0 24px}
.actions{margin-top:16px;gap:8px}td.time{white-space:nowrap}
table.keys th,table.keys td{padding:10px 8px}table.keys code{white-space:nowrap}table.keys small code,table.keys .muted code{white-space:normal}table.keys form.inline{display:inline-block;margin:0 4px 4px 0}
code.answer{display:block;max-width:360px;white-space:pre-wrap;overflow-wrap:anywhere}
table.audit code{white-space:nowrap}table.audit th:last-child{width:40%}dl.change{margin:0;font-size:13px}
dl.change div{display:flex;flex-wrap:wrap;column-gap:6px}dl.change dt{color:var(--muted)}dl.change dt::after{content:":"}
dl.change dd{margin:0;overflow-wrap:anywhere}
form.inline{display:inline}
.row{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-end}
.field{display:flex;flex-direction:column;gap:4px;margin-bottom:12px}
.field.check{flex-direction:row;align-items:center;gap:8px}
label{font-size:13px;font-weight:600}
.card textarea{width:100%;box-sizing:border-box;font:13px/1.4 ui-monospace,monospace}
input,select{font:inherit;color:var(--text);background:var(--bg);border:1px solid var(--line);border-radius:6px;
padding:7px 10px;min-width:0}
button,.button{font:inherit;font-weight:600;border-radius:6px;padding:7px 14px;border:1px solid var(--accent);
background:var(--accent);color:var(--accent-text);cursor:pointer;text-decoration:none;display:inline-block}
button.secondary,.button.secondary{background:transparent;color:var(--text);border-color:var(--line)}
button.danger{background:transparent;color:var(--danger);border-color:var(--danger)}
button.small,.button.small{padding:3px 10px;font-size:13px}
.notice{border-left:4px solid var(--accent);background:var(--panel);padding:12px 16px;border-radius:6px;
margin-bottom:18px}
.notice.warn{border-color:var(--warn)}.notice.error{border-color:var(--danger)}
.secret{display:flex;gap:8px;align-items:center;flex-wrap:wrap}
.secret code{font-size:14px;padding:8px 10px}
.empty{text-align:center;padding:36px 20px;color:var(--muted)}
.empty strong{display:block;color:var(--text);font-size:16px;margin-bottom:6px}
.pager{display:flex;gap:10px;justify-content:space-between;align-items:center}
dl.fields{display:grid;grid-template-columns:max-content 1fr;gap:8px 20px;margin:0}
dl.fields dt{color:var(--muted);font-size:13px}dl.fields dd{margin:0;overflow-wrap:anywhere;white-space:pre-wrap}
.stats{display:grid;grid-template-columns:repeat(auto-fit,minmax(160px,1fr));gap:12px;margin-bottom:18px}
.stat{background:var(--panel);border:1px solid var(--line);border-radius:10px;padding:14px 16px}
.stat b{display:block;font-size:22px}.stat span{color:var(--muted);font-size:13px}
svg.chart{width:100%;height:auto;display:block}
svg .bar{fill:var(--accent)}svg .track{fill:var(--code)}svg .axis{fill:var(--muted);font-size:11px}
svg path.cost{fill:none;stroke:var(--warn);stroke-width:2}svg circle.cost{fill:var(--warn)}svg .bar.over{fill:var(--danger)}
.legend{color:var(--muted);font-size:13px;margin:8px 0 0}.legend .key{display:inline-block;width:10px;height:10px;border-radius:2px;margin-left:8px}
.legend .key.bar{background:var(--accent)}.legend .key.cost{background:var(--warn)}
.auth{max-width:400px;margin:10vh auto;padding:0 16px}
.auth .card{padding:26px}
.auth form+.lead{margin-top:20px}
.auth input{width:100%}
@media (max-width:760px){.shell{flex-direction:column}
.side{width:auto;border-right:0;border-bottom:1px solid var(--line)}.side-in{padding:12px;position:static;height:auto}
.side nav{display:flex;flex-wrap:wrap;gap:4px}.who{margin-top:8px}main{padding:18px 14px}
.brand{padding-bottom:8px}}
`
