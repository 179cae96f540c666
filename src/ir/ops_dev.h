/* ops_dev.h - the device columns of one UNARY or BINARY row of ops.def, as a
 * struct: the build's generator (cmake/gen_ops.c) writes the functions from
 * them, and the code generator (src/codegen/expr.c) picks a 16-bit op's
 * function (kf_<op>_h16 or kf_<op>) by whether its row has a .half column. */
#ifndef KF_IR_OPS_DEV_H
#define KF_IR_OPS_DEV_H

/* Designated initializers in ops.def; a field left out is NULL. */
typedef struct ir_op_dev {
  const char *f32;        /* float (f16, bf16 too unless .half), default policy */
  const char *f32_strict; /* KF_MATH_STRICT, when it differs */
  const char *f32_fast;   /* KF_MATH_FAST, when it differs */
  const char *f32_note;   /* a comment placed before the float function */
  const char *half;       /* f16 and bf16 compute (kf_<op>_h16), default policy */
  const char *half_note;  /* a comment placed before the 16-bit function */
  const char *ints;       /* int and long long: T the type, U its unsigned */
  const char *bools;      /* bool */
  const char *every;      /* one template over every compute type T */
} ir_op_dev;

#endif
