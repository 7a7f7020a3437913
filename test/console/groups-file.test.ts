/** The groups, teams and role-assignment pages in Chromium on the file backend (see groups.ts). */
import { groupsSuite } from './groups.js';

groupsSuite('file');
