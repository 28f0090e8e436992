/** The page's stylesheet: one colour per outcome everywhere (text, bars, lines), light and dark. */
export const PAGE_STYLE: string = `
:root { color-scheme: light dark; --bg: #f5f6f8; --card: #ffffff; --fg: #18202b; --muted: #667085; --line: #e3e6eb;
  --allowed: #17924f; --denied: #d3382c; --deferred: #c97a00; --limit: #4b5565; --accent: #3b5bdb; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0e1217; --card: #161c24; --fg: #e4e8ee; --muted: #95a0b1; --line: #283140;
    --allowed: #3fcf82; --denied: #ff6f61; --deferred: #f2b33d; --limit: #a3adbd; --accent: #7c96ff; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
header { display: flex; align-items: center; gap: 12px; padding: 14px 24px; border-bottom: 1px solid var(--line); background: var(--card); flex-wrap: wrap; }
h1 { font-size: 18px; margin: 0; font-weight: 650; }
h2 { font-size: 16px; margin: 0 0 12px; display: flex; align-items: baseline; gap: 10px; flex-wrap: wrap; }
h3 { font-size: 13px; margin: 22px 0 8px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; font-weight: 600; }
main { padding: 20px 24px 40px; max-width: 1280px; }
section.limiter { margin-bottom: 32px; }
.muted, .meta { color: var(--muted); font-weight: 400; font-size: 13px; }
.badge { font-size: 12px; padding: 2px 8px; border-radius: 999px; border: 1px solid var(--line); color: var(--muted); }
.badge.live { color: var(--allowed); border-color: var(--allowed); }
.badge.bad { color: var(--denied); border-color: var(--denied); }
.spacer { flex: 1; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(220px, 1fr)); gap: 12px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 12px 14px; }
.card .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.card .big { font-size: 28px; font-weight: 650; font-variant-numeric: tabular-nums; margin: 2px 0; }
.card .sub { color: var(--muted); font-size: 12px; }
.allowed { color: var(--allowed); } .denied { color: var(--denied); } .deferred { color: var(--deferred); }
svg { display: block; width: 100%; overflow: visible; }
svg .l-allowed { stroke: var(--allowed); } svg .l-denied { stroke: var(--denied); } svg .l-deferred { stroke: var(--deferred); }
svg polyline { fill: none; stroke-width: 1.6; stroke-linejoin: round; }
svg .a-allowed { fill: var(--allowed); opacity: .14; stroke: none; }
svg .limit-line { stroke: var(--limit); stroke-dasharray: 4 3; stroke-width: 1; }
svg .limit-text { fill: var(--muted); font-size: 10px; }
svg .base { stroke: var(--line); stroke-width: 1; }
table { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line); border-radius: 10px; overflow: hidden; }
th, td { padding: 7px 10px; text-align: left; border-bottom: 1px solid var(--line); vertical-align: middle; }
th { font-size: 12px; color: var(--muted); font-weight: 600; background: var(--bg); }
tr:last-child td { border-bottom: none; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th { white-space: nowrap; }
td.c-group, td.c-id { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 13px; max-width: 220px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
td.c-plan { white-space: nowrap; }
td.c-spark { width: 170px; min-width: 130px; }
.scroll { overflow-x: auto; border-radius: 10px; }
.share { display: flex; align-items: center; gap: 8px; min-width: 220px; }
.bar { position: relative; flex: 1; min-width: 90px; height: 8px; background: var(--line); border-radius: 4px; }
.bar .fill { position: absolute; left: 0; top: 0; bottom: 0; background: var(--allowed); border-radius: 4px; }
.bar .fair { position: absolute; top: -3px; bottom: -3px; width: 2px; background: var(--fg); }
.share .txt { font-variant-numeric: tabular-nums; font-size: 12px; white-space: nowrap; }
.states { display: flex; gap: 8px; flex-wrap: wrap; }
.state { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 6px 12px; min-width: 92px; }
.state b { display: block; font-size: 20px; font-variant-numeric: tabular-nums; }
.state span { color: var(--muted); font-size: 12px; }
.state.s-dead b { color: var(--denied); } .state.s-pending b, .state.s-delayed b { color: var(--deferred); }
.state.s-oldest { min-width: 120px; } .state.s-oldest b { color: var(--deferred); }
.empty { color: var(--muted); padding: 10px 0; }
button { font: inherit; font-size: 12px; padding: 3px 10px; border-radius: 6px; border: 1px solid var(--line); background: var(--bg); color: var(--fg); cursor: pointer; }
button:hover { border-color: var(--accent); }
button.danger:hover { border-color: var(--denied); color: var(--denied); }
form#unlock { display: flex; gap: 6px; align-items: center; }
form#unlock[hidden] { display: none; }
form#unlock input { font: inherit; font-size: 12px; padding: 3px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); width: 180px; }
form.override-form { margin-top: 10px; background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 10px 12px; display: grid; gap: 8px; }
form.override-form[hidden] { display: none; }
form.override-form .row { display: flex; gap: 10px; flex-wrap: wrap; align-items: flex-end; }
form.override-form label { display: flex; flex-direction: column; gap: 2px; font-size: 12px; color: var(--muted); }
form.override-form label.check { flex-direction: row; align-items: center; gap: 5px; padding-bottom: 4px; }
form.override-form input, form.override-form select { font: inherit; font-size: 13px; padding: 3px 6px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
form.override-form .ttl { display: flex; gap: 4px; }
.form-msg { font-size: 13px; min-height: 1em; } .form-msg.bad { color: var(--denied); }
.note { font-size: 12px; }
.legend { display: flex; gap: 14px; font-size: 12px; color: var(--muted); }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 5px; vertical-align: -1px; }
.legend i.allowed { background: var(--allowed); } .legend i.denied { background: var(--denied); } .legend i.deferred { background: var(--deferred); }
`;
