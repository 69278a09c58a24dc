import * as yup from 'yup';

/** Any other fields are ignored; an empty string counts as missing. */
export const LoginInput = yup
  .object({
    email: yup.string().required(),
    password: yup.string().required(),
  })
  .required();

export type LoginInput = yup.InferType<typeof LoginInput>;
