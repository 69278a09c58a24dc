import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';
import { CHROMIUM } from '../harness/browser.js';

/** One Lighthouse run of a page: the categories' scores (0–100) and what the targets look at. */
export interface LighthouseRun {
  page: string;
  performance: number;
  accessibility: number;
  bestPractices: number;
  seo: number;
  /** Simulated mobile (Lighthouse's default: Moto G Power, slow 4G, CPU slowed 4×), in ms. */
  firstContentfulPaintMs: number;
  largestContentfulPaintMs: number;
  totalBlockingTimeMs: number;
  cumulativeLayoutShift: number;
  /**
   * Bytes over the wire (compressed, headers included), as Lighthouse's resource summary counts
   * them.
   */
  scriptBytes: number;
  totalBytes: number;
  /** Audits that count towards a category and did not pass, with their score. */
  failed: string[];
}

const CATEGORIES = ['performance', 'accessibility', 'best-practices', 'seo'];

/**
 * Lighthouse 12 (the npm package) on Debian's Chromium, headless, with its default mobile
 * settings. Chromium is kept from its own background traffic: the machine reaches no network,
 * and nothing but the page may be asked for.
 */
export async function runLighthouse(
  page: string,
  url: string,
  headers: Record<string, string> = {},
): Promise<LighthouseRun> {
  const chrome = await chromeLauncher.launch({
    chromePath: process.env.CHROME_PATH ?? CHROMIUM,
    chromeFlags: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
  try {
    const result = await lighthouse(url, {
      port: chrome.port,
      output: 'json',
      logLevel: 'error',
      onlyCategories: CATEGORIES,
      extraHeaders: headers,
    });
    if (!result) throw new Error(`Lighthouse returned nothing for ${url}`);
    const { lhr } = result;
    if (lhr.runtimeError) throw new Error(`Lighthouse on ${url}: ${lhr.runtimeError.message}`);
    const score = (category: string) => Math.round((lhr.categories[category]?.score ?? NaN) * 100);
    const numeric = (audit: string) => lhr.audits[audit]?.numericValue ?? NaN;
    const summary =
      (
        lhr.audits['resource-summary']?.details as
          { items?: { resourceType: string; transferSize: number }[] } | undefined
      )?.items ?? [];
    const transferred = (type: string) =>
      summary.find((item) => item.resourceType === type)?.transferSize ?? 0;
    const failed = Object.values(lhr.categories).flatMap((category) =>
      category.auditRefs
        .filter(
          (ref) =>
            ref.weight > 0 &&
            lhr.audits[ref.id]?.score !== null &&
            (lhr.audits[ref.id]?.score ?? 1) < 1,
        )
        .map((ref) => `${category.id}: ${ref.id} (${lhr.audits[ref.id]!.score})`),
    );
    return {
      page,
      performance: score('performance'),
      accessibility: score('accessibility'),
      bestPractices: score('best-practices'),
      seo: score('seo'),
      firstContentfulPaintMs: numeric('first-contentful-paint'),
      largestContentfulPaintMs: numeric('largest-contentful-paint'),
      totalBlockingTimeMs: numeric('total-blocking-time'),
      cumulativeLayoutShift: numeric('cumulative-layout-shift'),
      scriptBytes: transferred('script'),
      totalBytes: transferred('total'),
      failed,
    };
  } finally {
    chrome.kill();
  }
}
