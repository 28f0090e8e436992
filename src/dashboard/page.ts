/**
 * The dashboard page: one HTML string with its CSS and script inline (no CDN, no build step, works offline),
 * served with a Content-Security-Policy that lets only these exact script and style blocks run (their
 * SHA-256), so even a markup slip could not run a tenant's text as code.
 */
import { createHash } from 'node:crypto';
import { PAGE_SCRIPT } from './page-script';
import { PAGE_STYLE } from './page-style';

const hash = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

export const PAGE_HTML: string = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>bulk-limiter dashboard</title>
<link rel="icon" href="data:,">
<style>${PAGE_STYLE}</style>
</head>
<body>
<header>
  <h1>bulk-limiter</h1>
  <span id="status" class="badge">connecting…</span>
  <span id="updated" class="muted"></span>
  <span class="spacer"></span>
  <span class="legend"><span><i class="allowed"></i>admitted</span><span><i class="denied"></i>denied</span><span><i class="deferred"></i>deferred</span></span>
  <form id="unlock" hidden><input id="token" type="password" placeholder="token for dead-letter and override actions" autocomplete="off"><button type="submit">Unlock</button></form>
</header>
<main id="root"></main>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;

export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': [
    "default-src 'none'",
    `script-src ${hash(PAGE_SCRIPT)}`,
    `style-src ${hash(PAGE_STYLE)}`,
    "connect-src 'self'",
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
};
