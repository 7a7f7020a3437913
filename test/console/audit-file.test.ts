/** The audit log page in Chromium on the file backend (see audit.ts). */
import { auditSuite } from './audit.js';

auditSuite('file');
