import tailwindcss from '@tailwindcss/vite';
import { tanstackRouter } from '@tanstack/router-plugin/vite';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';

// The web client's build (web/README.md). File routes under src/routes, one chunk per route; the
// service worker is our own (src/sw.ts: precache, offline shell, Web Push), its manifest injected.
// `npm run web:dev` serves it with hot reload and sends the API to the service on :3000.

const service = process.env.BILLRAIL_URL ?? 'http://127.0.0.1:3000';

/**
 * jsPDF imports html2canvas, canvg and dompurify on demand for its html() and SVG drawing, which the
 * receipt (src/receipt-files.ts: text only) never calls: built, they were 3 chunks and about 105 KB
 * gzipped. Imported by jsPDF, each is a module that throws instead, and so not built at all: a call of
 * html() would be refused with "Could not load html2canvas" rather than load it.
 */
function jsPdfWithoutOptionalDependencies(): Plugin {
  const unused = new Set(['html2canvas', 'canvg', 'dompurify']);
  const emptyId = '\0jspdf-unused-optional';
  return {
    name: 'jspdf-without-optional-dependencies',
    enforce: 'pre',
    resolveId(source, importer) {
      return unused.has(source) && importer !== undefined && /[\\/]node_modules[\\/]jspdf[\\/]/.test(importer)
        ? emptyId
        : null;
    },
    load(id) {
      return id === emptyId
        ? "throw new Error('not in this build: the receipt draws text only (web/vite.config.ts)');\n"
        : null;
    },
  };
}

/**
 * What the service worker does not precache: jsPDF, loaded only when a person saves a receipt as a
 * PDF (about 128 KB gzipped, more than the entry chunk), is fetched then, not on every install; so
 * is the module that stands in for its optional dependencies (_jspdf-unused-optional).
 */
const notPrecached = ['**/*jspdf*.js'];

export default defineConfig({
  root: import.meta.dirname,
  plugins: [
    jsPdfWithoutOptionalDependencies(),
    tanstackRouter({ target: 'react', autoCodeSplitting: true }),
    react(),
    tailwindcss(),
    VitePWA({
      strategies: 'injectManifest',
      srcDir: 'src',
      filename: 'sw.ts',
      injectRegister: false,
      manifest: {
        name: 'billrail',
        short_name: 'billrail',
        description: 'Airtime, data, bills and savings from your wallet',
        theme_color: '#0f5132',
        background_color: '#ffffff',
        display: 'standalone',
        start_url: '/',
        icons: [
          { src: '/icon-192.png', sizes: '192x192', type: 'image/png' },
          { src: '/icon-512.png', sizes: '512x512', type: 'image/png' },
          { src: '/icon-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
        ],
      },
      injectManifest: {
        globPatterns: ['**/*.{js,css,html,png,svg,webmanifest}'],
        globIgnores: notPrecached,
      },
    }),
  ],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false },
  server: {
    proxy: Object.fromEntries(
      ['/_serverFn', '/openapi.json', '/__sandbox', '/api', '/kyc'].map((path) => [path, service]),
    ),
  },
});
