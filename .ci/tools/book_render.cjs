// Opens the built guide's pages in headless Chromium, as a reader would, and
// fails when an image on a page does not load. Run by .ci/steps/book.sh:
//
//   node book_render.cjs BASE_URL SCREEN_DIR PAGES_FILE
//
// BASE_URL serves book/book (python3 -m http.server on localhost, not
// file://). PAGES_FILE has one `page.html count` line per page, count being
// how many images the chapter's markdown embeds (book_images.py writes it).
// For each page: the page itself must answer 200; every `document.images`
// entry, SVGs included, must end `complete` with `naturalWidth > 0` and
// decode; the page must hold at least `count` images (so an image mdBook
// did not render as one is caught); no image request may fail or answer
// 4xx/5xx. A full-page screenshot of each page is saved in SCREEN_DIR
// (under target/, never in the repo) and its path printed.
//
// playwright-core is loaded from $PLAYWRIGHT_DIR/node_modules (the step
// installs it there); Chromium is $CHROMIUM (default /usr/bin/chromium),
// started with a fresh profile directory.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');

const [base, screenDir, pagesFile] = process.argv.slice(2);
if (!base || !screenDir || !pagesFile) {
  console.error('usage: node book_render.cjs BASE_URL SCREEN_DIR PAGES_FILE');
  process.exit(2);
}
const { chromium } = require(path.join(process.env.PLAYWRIGHT_DIR, 'node_modules', 'playwright-core'));
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';

const pages = fs.readFileSync(pagesFile, 'utf8').split('\n').filter(Boolean).map((line) => {
  const [page, count] = line.trim().split(/\s+/);
  return { page, expected: Number(count || 0) };
});

// Runs in the page: waits for every image to settle (load or error), then
// reports each one. Lazy images are made eager first so that an image below
// the fold is fetched too.
async function inspectImages() {
  const images = Array.from(document.images);
  for (const img of images) {
    if (img.loading === 'lazy') img.loading = 'eager';
  }
  await Promise.all(images.map((img) => img.complete ? null : new Promise((done) => {
    img.addEventListener('load', done, { once: true });
    img.addEventListener('error', done, { once: true });
    setTimeout(done, 15000);
  })));
  const out = [];
  for (const img of images) {
    let decodeError = null;
    try {
      await img.decode();
    } catch (e) {
      decodeError = String(e && e.message || e);
    }
    out.push({
      src: img.getAttribute('src'),
      url: img.currentSrc || img.src,
      complete: img.complete,
      naturalWidth: img.naturalWidth,
      naturalHeight: img.naturalHeight,
      decodeError,
    });
  }
  return out;
}

async function main() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'kaspar-book-chromium-'));
  fs.mkdirSync(screenDir, { recursive: true });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 900 },
    timeout: 60000,
  });
  let failures = 0;
  try {
    for (const { page: name, expected } of pages) {
      const url = new URL(name, base).href;
      const problems = [];
      const page = await context.newPage();
      page.on('requestfailed', (req) => {
        if (req.resourceType() === 'image') problems.push(`request failed: ${req.url()} (${req.failure() && req.failure().errorText})`);
      });
      page.on('response', (res) => {
        if (res.request().resourceType() === 'image' && res.status() >= 400) problems.push(`HTTP ${res.status()}: ${res.url()}`);
      });
      const response = await page.goto(url, { waitUntil: 'load', timeout: 30000 });
      if (!response || response.status() !== 200) {
        problems.push(`the page itself answered ${response ? response.status() : 'nothing'} (is the chapter in SUMMARY.md?)`);
      }
      const images = await page.evaluate(inspectImages);
      let loaded = 0;
      for (const img of images) {
        const ok = img.complete && img.naturalWidth > 0 && !img.decodeError;
        if (ok) {
          loaded += 1;
        } else {
          problems.push(`image did not load: src="${img.src}" (${img.url}): complete=${img.complete} naturalWidth=${img.naturalWidth}`
            + (img.decodeError ? ` decode: ${img.decodeError}` : ''));
        }
      }
      if (images.length < expected) {
        problems.push(`the page shows ${images.length} image(s) but its chapter embeds ${expected}`);
      }
      const shot = path.join(screenDir, name.replace(/[\\/]/g, '_').replace(/\.html$/, '.png'));
      await page.screenshot({ path: shot, fullPage: true });
      await page.close();
      const unique = [...new Set(problems)];
      if (unique.length) {
        failures += unique.length;
        for (const p of unique) console.error(`book render: ${name}: ${p}`);
      }
      console.log(`book render: ${name}: ${loaded}/${images.length} image(s) loaded${unique.length ? ' -- FAILED' : ''}; screenshot ${shot}`);
    }
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  if (failures) {
    console.error(`book render: ${failures} problem(s) (see above)`);
    process.exit(1);
  }
  console.log(`book render: ${pages.length} page(s) rendered in Chromium, every image loaded`);
}

main().catch((e) => {
  console.error(`book render: ${e && e.stack || e}`);
  process.exit(1);
});
