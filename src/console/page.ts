/**
 * The console's one HTML page: no inline script or style (the Content-Security-Policy forbids
 * both), the built script and stylesheet by their hashed names, an empty icon so the browser asks
 * for no /favicon.ico.
 */
export function consolePage(files: { readonly script: string; readonly style: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sluice console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/${files.style}">
<script type="module" src="/console/${files.script}"></script>
</head>
<body>
<noscript>The Sluice console needs JavaScript. The same data is in the read API (GET /v1/events, /v1/metrics, /v1/apps, /v1/error-groups) and GET /pipeline.</noscript>
</body>
</html>
`;
}

/** Where the build writes the console (under dist/) and the name of its manifest there. */
export const CONSOLE_DIST_DIR = 'console';
export const CONSOLE_MANIFEST = 'manifest.json';

/** The manifest the build writes: the hashed file names of the bundle. */
export interface ConsoleManifest {
  readonly script: string;
  readonly style: string;
}

/** Most bytes the console may cost a browser to download, gzip-compressed (page, script, stylesheet). */
export const CONSOLE_MAX_GZIP_BYTES = 150 * 1024;
