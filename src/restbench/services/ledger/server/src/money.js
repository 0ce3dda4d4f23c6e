'use strict';
// Money in integer minor units. Every rounding rule of the service lives here.

// Digits after the decimal point of each supported currency (ISO 4217 minor units).
const EXPONENTS = { EUR: 2, USD: 2, JPY: 0 };

// Exchange rates in millionths: 1 unit of the first currency buys rate / 1e6 units of the second.
const RATES_MICRO = {
  'EUR:USD': 1085000n,
  'USD:EUR': 921700n,
  'EUR:JPY': 161400000n,
  'JPY:EUR': 6196n,
  'USD:JPY': 148750000n,
  'JPY:USD': 6723n,
};

// Transfers to an account of another owner cost 0.25% (25 basis points) of the amount.
const FEE_BASIS_POINTS = 25n;

const MAX_AMOUNT = 100000000;

function isCurrency(code) {
  return Object.prototype.hasOwnProperty.call(EXPONENTS, code);
}

function isAmount(value) {
  return Number.isInteger(value) && value >= 1 && value <= MAX_AMOUNT;
}

// numerator / denominator for positive BigInts, a tie rounded away from zero (half-up).
function divideHalfUp(numerator, denominator) {
  const quotient = numerator / denominator;
  const remainder = numerator % denominator;
  return remainder * 2n >= denominator ? quotient + 1n : quotient;
}

// numerator / denominator for positive BigInts, a tie rounded to the even neighbour (banker's).
function divideHalfEven(numerator, denominator) {
  const quotient = numerator / denominator;
  const twice = (numerator % denominator) * 2n;
  if (twice > denominator) return quotient + 1n;
  if (twice < denominator) return quotient;
  return quotient % 2n === 0n ? quotient : quotient + 1n;
}

function transferFee(amount, sameOwner) {
  if (sameOwner) return 0;
  return Number(divideHalfEven(BigInt(amount) * FEE_BASIS_POINTS, 10000n));
}

function rateMicro(from, to) {
  if (from === to) return 1000000n;
  return RATES_MICRO[`${from}:${to}`];
}

// The rate as a decimal string with six places, e.g. "1.085000".
function formatRate(micro) {
  const whole = micro / 1000000n;
  const fraction = (micro % 1000000n).toString().padStart(6, '0');
  return `${whole}.${fraction}`;
}

// `amount` minor units of `from` in minor units of `to`, rounded half-up.
function convert(amount, from, to) {
  const scaleTo = 10n ** BigInt(EXPONENTS[to]);
  const scaleFrom = 10n ** BigInt(EXPONENTS[from]);
  const numerator = BigInt(amount) * rateMicro(from, to) * scaleTo;
  return Number(divideHalfUp(numerator, 1000000n * scaleFrom));
}

module.exports = {
  EXPONENTS, MAX_AMOUNT, isCurrency, isAmount, transferFee, convert, rateMicro, formatRate,
  divideHalfUp, divideHalfEven,
};
