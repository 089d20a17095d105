// Deliberate violations: tests/medium/lint-rules.spec.ts lints this file and expects each import refused.
// `npm run lint` skips the lint-fixtures folders; the build leaves them out. (No @engram import here:
// every lib depends on the domain, so one would add a cycle to the project graph the real files are checked against.)
import Database from 'better-sqlite3-multiple-ciphers';
import { Injectable } from '@nestjs/common';
import { Queue } from 'bullmq';

export const forbidden = [Database, Injectable, Queue];
