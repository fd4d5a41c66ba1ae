import { readdirSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

// The web client at `/` (API.md section 15): the files of a Vite build (src/web-build.ts), and
// index.html for a browser navigating to one of the client's own routes (/history, /buy/airtime…),
// which the client then routes itself. Everything else (the API, the sandbox, an unknown path asked
// for by anything but a browser page load) keeps the service's JSON 404.
//
// Every file of the client is sent with a strict Content-Security-Policy (no inline or third-party
// script, style or connection) and is never rate-limited: a page load and the service worker's
// precache fetch dozens of chunks, which must not use up the caller's budget for the API. Only the
// web app's own responses carry these headers; the API's and the sandbox pages' are left as they are.

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "worker-src 'self'",
  "manifest-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "object-src 'none'",
].join('; ');

/** Vite names what it puts under assets/ by content hash: a changed file is a new URL. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** index.html, sw.js, the manifest and the icons keep their names: revalidated on every use. */
const REVALIDATE = 'no-cache';

/** First path segments that are the service's, never the client's, even for a browser. */
const RESERVED = new Set([
  '_serverFn',
  'api',
  '__sandbox',
  'kyc',
  'openapi.json',
  'healthz',
  'readyz',
  'metrics',
  'assets',
]);

/**
 * The file names served: plain relative paths, with no dot-file, `..` or empty segment, nor a
 * character a route would read as a parameter (`:`) or wildcard (`*`).
 */
const PLAIN_NAME = /^[\w-][\w.-]*(?:\/[\w-][\w.-]*)*$/;

const routeOptions = { schema: { hide: true }, config: { rateLimit: false } };

export type WebApp = {
  /**
   * Whether a request that matched no route is a browser loading a page of the client: a GET or HEAD
   * that accepts text/html, outside the service's paths, for a path that is not a file name.
   */
  isNavigation(request: FastifyRequest): boolean;
  /** Answers index.html, with which the client routes the path itself. */
  sendIndex(reply: FastifyReply): FastifyReply;
};

/** Serves the build in `distDir` (which has an index.html) at `/`. */
export async function registerWebApp(
  app: FastifyInstance,
  { distDir }: { distDir: string },
): Promise<WebApp> {
  const assetsDir = path.join(distDir, 'assets') + path.sep;
  await app.register(fastifyStatic, {
    root: distDir,
    // The routes are this module's own (below): they are hidden from /openapi.json and not rate-limited.
    serve: false,
    index: false,
    dotfiles: 'ignore',
    cacheControl: false,
    // The build wrote .br and .gz copies of its text files (src/web-build.ts): sent to browsers that
    // accept them, with Vary: Accept-Encoding.
    preCompressed: true,
    // Called for a file found (200, 206 or 304), never for a 404, which stays the API's.
    setHeaders(response, filePath) {
      response.setHeader('cache-control', filePath.startsWith(assetsDir) ? IMMUTABLE : REVALIDATE);
      response.setHeader('content-security-policy', CONTENT_SECURITY_POLICY);
      response.setHeader('x-content-type-options', 'nosniff');
      response.setHeader('referrer-policy', 'no-referrer');
      // The same URL answers a .br, a .gz or the plain file by Accept-Encoding: caches must tell them apart.
      response.setHeader('vary', 'Accept-Encoding');
    },
  });

  // The files outside assets/ (index.html, sw.js, manifest.webmanifest, icons…) are known now; those
  // under assets/ are looked up when asked for, so a rebuild by another process is served at once.
  for (const entry of readdirSync(distDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.relative(distDir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/');
    if (file.startsWith('assets/') || !PLAIN_NAME.test(file) || /\.(?:br|gz)$/.test(file)) continue;
    const urls = file === 'index.html' ? ['/', '/index.html'] : [`/${file}`];
    for (const url of urls) app.get(url, routeOptions, (_request, reply) => reply.sendFile(file));
  }
  app.get('/assets/*', routeOptions, (request, reply) => {
    const name = (request.params as { '*': string })['*'];
    if (!PLAIN_NAME.test(name)) return reply.callNotFound();
    return reply.sendFile(`assets/${name}`);
  });

  return {
    isNavigation(request) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return false;
      if (!(request.headers.accept ?? '').includes('text/html')) return false;
      const pathname = request.url.split('?')[0] ?? '/';
      if (RESERVED.has(pathname.split('/')[1] ?? '')) return false;
      // A missing /favicon.ico or /robots.txt is a 404, not the client.
      return !pathname.slice(pathname.lastIndexOf('/') + 1).includes('.');
    },
    sendIndex(reply) {
      return reply.code(200).sendFile('index.html');
    },
  };
}
